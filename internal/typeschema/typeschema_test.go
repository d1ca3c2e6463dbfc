package typeschema_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"go/ast"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/typeschema"
)

// body returns For(t) without "$schema", re-encoded (so with sorted keys).
func body(t *testing.T, typ reflect.Type) string {
	t.Helper()
	m := decode(t, typ)
	assert.Equal(t, typeschema.Draft, m["$schema"])
	delete(m, "$schema")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

func decode(t *testing.T, typ reflect.Type) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(typeschema.For(typ)))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	return m
}

// validate checks input against Compile(typ).
func validate(t *testing.T, typ reflect.Type, input string) error {
	t.Helper()
	s, err := typeschema.Compile(typ)
	require.NoError(t, err, "schema of %v: %s", typ, typeschema.For(typ))
	return s.Validate(json.RawMessage(input))
}

type withMarshaler struct{ X int }

func (withMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

type withUnmarshaler struct{ X int }

func (*withUnmarshaler) UnmarshalJSON([]byte) error { return nil }

type selfPointer *selfPointer

type selfSlice []selfSlice

type selfMap map[string]selfMap

func TestForKinds(t *testing.T) {
	const (
		str     = `{"type":["string","null"]}`
		int64s  = `{"maximum":9223372036854775807,"minimum":-9223372036854775808,"type":["integer","null"]}`
		anyJSON = `{}`
		null    = `{"type":"null"}`
	)
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"string", reflect.TypeFor[string](), str},
		{"int64", reflect.TypeFor[int64](), int64s},
		{"int", reflect.TypeFor[int](), int64s},
		{"int8", reflect.TypeFor[int8](), `{"maximum":127,"minimum":-128,"type":["integer","null"]}`},
		{"uint", reflect.TypeFor[uint](), `{"maximum":18446744073709551615,"minimum":0,"type":["integer","null"]}`},
		{"uint16", reflect.TypeFor[uint16](), `{"maximum":65535,"minimum":0,"type":["integer","null"]}`},
		{"uintptr", reflect.TypeFor[uintptr](), `{"maximum":18446744073709551615,"minimum":0,"type":["integer","null"]}`},
		{"float32", reflect.TypeFor[float32](), `{"type":["number","null"]}`},
		{"float64", reflect.TypeFor[float64](), `{"type":["number","null"]}`},
		{"bool", reflect.TypeFor[bool](), `{"type":["boolean","null"]}`},
		{"pointer to pointer", reflect.TypeFor[**int64](), int64s},
		{"pointer to itself", reflect.TypeFor[selfPointer](), anyJSON},
		{"time", reflect.TypeFor[time.Time](), `{"format":"date-time","pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$","type":["string","null"]}`},
		{"time pointer", reflect.TypeFor[*time.Time](), body(t, reflect.TypeFor[time.Time]())},
		{"slice", reflect.TypeFor[[]float64](), `{"items":{"type":["number","null"]},"type":["array","null"]}`},
		{"array", reflect.TypeFor[[2]string](), `{"items":` + str + `,"type":["array","null"]}`},
		{"byte array is an array", reflect.TypeFor[[4]byte](), `{"items":{"maximum":255,"minimum":0,"type":["integer","null"]},"type":["array","null"]}`},
		{"map", reflect.TypeFor[map[string]int64](), `{"additionalProperties":` + int64s + `,"type":["object","null"]}`},
		{"map with uint8 keys", reflect.TypeFor[map[uint8]string](), `{"additionalProperties":` + str + `,"propertyNames":{"pattern":"^0*(?:0|[1-9][0-9]{0,1}|1[0-9]{2}|2[0-4][0-9]|25[0-4]|255)$"},"type":["object","null"]}`},
		{"map with text keys", reflect.TypeFor[map[netip.Addr]bool](), `{"additionalProperties":{"type":["boolean","null"]},"type":["object","null"]}`},
		{"map with float keys decodes only null", reflect.TypeFor[map[float64]string](), null},
		{"interface", reflect.TypeFor[any](), anyJSON},
		{"non-empty interface decodes only null", reflect.TypeFor[fmt.Stringer](), null},
		{"raw JSON", reflect.TypeFor[json.RawMessage](), anyJSON},
		{"marshaler", reflect.TypeFor[withMarshaler](), anyJSON},
		{"pointer unmarshaler", reflect.TypeFor[withUnmarshaler](), anyJSON},
		{"text unmarshaler", reflect.TypeFor[netip.Addr](), str},
		{"json.Number", reflect.TypeFor[json.Number](), `{"pattern":"^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$","type":["number","string","null"]}`},
		{"channel decodes only null", reflect.TypeFor[chan int](), null},
		{"complex decodes only null", reflect.TypeFor[complex128](), null},
		{"empty struct", reflect.TypeFor[struct{}](), `{"additionalProperties":false,"type":["object","null"]}`},
		{"nil type", nil, anyJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, body(t, tt.typ))
			_, err := typeschema.Compile(tt.typ)
			assert.NoError(t, err)
		})
	}
}

func TestForBytes(t *testing.T) {
	s := decode(t, reflect.TypeFor[[]byte]())
	assert.Equal(t, []any{"string", "null"}, s["type"])
	assert.Equal(t, "base64", s["contentEncoding"])
	for _, in := range []string{`"aGk="`, `""`, `null`, `"aGVs\nbG8="`} {
		assert.NoError(t, validate(t, reflect.TypeFor[[]byte](), in), in)
	}
	for _, in := range []string{`"aGk"`, `"not base64!"`, `[1,2]`, `5`} {
		assert.ErrorContains(t, validate(t, reflect.TypeFor[[]byte](), in), "at (root)", in)
	}
}

type inner struct {
	Host string `json:"host"`
	Port int    `json:"port,omitempty"`
}

type Zone struct {
	Zone string `json:"zone"`
}

type region struct{ Region string }

type tagged struct {
	Name      string  `json:"name"`
	Renamed   int     `json:"other_name"`
	Skipped   string  `json:"-"`
	Dash      string  `json:"-,"`
	NoTag     bool    //
	BadTag    string  `json:"a\\b"` // not a usable name: the Go name stays
	OmitEmpty *string `json:",omitempty"`
	Quoted    int64   `json:"quoted,string"`
	QuotedObj inner   `json:"quoted_obj,string"` // ",string" does not apply to structs
	unexposed int
	region    // unexported embedded struct: its exported fields are promoted
	*Zone
}

func TestForJSONTags(t *testing.T) {
	typ := reflect.TypeFor[tagged]()
	s := decode(t, typ)
	props := s["properties"].(map[string]any)
	assert.ElementsMatch(t, []string{"name", "other_name", "-", "NoTag", "BadTag", "OmitEmpty", "quoted", "quoted_obj", "Region", "zone"},
		keys(props))
	omit := "o"
	assert.ElementsMatch(t, encodedNames(t, tagged{OmitEmpty: &omit, Zone: &Zone{}}), keys(props), "the same members as encoding/json writes")
	assert.Equal(t, false, s["additionalProperties"])
	assert.Equal(t, []any{"string", "null"}, props["quoted"].(map[string]any)["type"])
	assert.NotContains(t, typeschema.For(typ), []byte(`"required"`))

	for _, tt := range []struct{ input, wantErr string }{
		{`{"name":"a","other_name":1,"-":"d","NoTag":true,"BadTag":"b","OmitEmpty":"o","quoted":"12","quoted_obj":{"host":"h"},"Region":"eu","zone":"z"}`, ""},
		{`{"NAME":"a","Other_Name":1,"region":"eu","ZONE":"z","quoted":null,"omitempty":null}`, ""},
		{`{"Skipped":"x"}`, `at (root): property "Skipped" not allowed`},
		{`{"unexposed":1}`, `at (root): property "unexposed" not allowed`},
		{`{"Renamed":1}`, `at (root): property "Renamed" not allowed`},
		{`{"quoted":12}`, `at /quoted: want null or string, got number`},
		{`{"quoted":"1.5"}`, `at /quoted: want a string matching`},
		{`{"other_name":"1"}`, `at /other_name: want null or integer, got string`},
		{`{"OTHER_NAME":"1"}`, `at /OTHER_NAME: want null or integer, got string`},
		{`{"quoted_obj":"x"}`, `at /quoted_obj: want null or object, got string`},
	} {
		err := validate(t, typ, tt.input)
		if tt.wantErr == "" {
			assert.NoError(t, err, tt.input)
			assertDecodes(t, typ, tt.input)
			continue
		}
		assert.ErrorContains(t, err, tt.wantErr, tt.input)
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// encodedNames lists the members encoding/json writes for v (which must have no nil
// embedded pointers to hide and no omitempty values to drop).
func encodedNames(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return keys(m)
}

// assertDecodes fails if encoding/json refuses input for typ.
func assertDecodes(t *testing.T, typ reflect.Type, input string) {
	t.Helper()
	assert.NoError(t, json.Unmarshal([]byte(input), reflect.New(typ).Interface()), "the schema accepts %s for %v", input, typ)
}

type baseID struct{ ID string }

type outerID struct {
	ID int
	baseID
}

type deepName struct{ Name int }
type midName struct{ deepName }
type shallowName struct{ Name string }

// depthWins: Name is found at depth 2 through midName before it is found at depth 1
// through shallowName; encoding/json takes the shallower one whatever the order.
type depthWins struct {
	midName
	shallowName
}

type tagA struct {
	X int `json:"x"`
}
type untaggedB struct{ X string }

// taggedWins: at the same depth a tagged member hides an untagged one ("x" vs "X" are
// different names, so both stay; "X" from tagA2 and untaggedB collide).
type tagA2 struct {
	X int `json:"X"`
}
type taggedWins struct {
	untaggedB
	tagA2
}

type ambiguousA struct{ V int }
type ambiguousB struct{ V string }
type ambiguous struct {
	ambiguousA
	ambiguousB
}

type hidden struct{ Secret string }
type embedsHiddenPtr struct {
	*hidden
	Visible int
}

type MyInt int
type embedsNonStruct struct {
	MyInt
	Other int
}

type namedEmbed struct {
	Zone `json:"where"`
}

// taggedHiddenPtr: encoding/json panics on any value for "h" (it cannot allocate the
// unexported pointer), null included.
type taggedHiddenPtr struct {
	*hidden `json:"h"`
}

type zoneHolder struct{ *Zone }

// viaUnexported reaches an exported embedded pointer through an unexported embedded
// struct, which encoding/json can allocate.
type viaUnexported struct{ zoneHolder }

type selfEmbed struct {
	*selfEmbed
	X int
}

func TestForEmbeddedStructs(t *testing.T) {
	tests := []struct {
		name    string
		typ     reflect.Type
		members []string
		accept  []string
		refuse  map[string]string // input: wanted message
	}{
		{"outer field wins over promoted", reflect.TypeFor[outerID](), []string{"ID"},
			[]string{`{"ID":5}`, `{"id":5}`}, map[string]string{`{"ID":"x"}`: "at /ID: want null or integer"}},
		{"shallower promoted field wins", reflect.TypeFor[depthWins](), []string{"Name"},
			[]string{`{"Name":"x"}`}, map[string]string{`{"Name":1}`: "at /Name: want null or string"}},
		{"tagged field wins at the same depth", reflect.TypeFor[taggedWins](), []string{"X"},
			[]string{`{"X":1}`}, map[string]string{`{"X":"s"}`: "at /X: want null or integer"}},
		{"ambiguous fields are dropped", reflect.TypeFor[ambiguous](), nil,
			nil, map[string]string{`{"V":1}`: `at (root): property "V" not allowed`}},
		{"embedded pointer to an unexported struct cannot be set", reflect.TypeFor[embedsHiddenPtr](), []string{"Secret", "Visible"},
			[]string{`{"Visible":1}`}, map[string]string{`{"Secret":"x"}`: "at /Secret: not allowed", `{"secret":null}`: "at /secret: not allowed"}},
		{"embedded non-struct is a named field", reflect.TypeFor[embedsNonStruct](), []string{"MyInt", "Other"},
			[]string{`{"MyInt":1,"Other":2}`}, map[string]string{`{"MyInt":"x"}`: "at /MyInt: want null or integer"}},
		{"embedded struct with a tag is a named field", reflect.TypeFor[namedEmbed](), []string{"where"},
			[]string{`{"where":{"zone":"z"}}`}, map[string]string{`{"zone":"z"}`: `property "zone" not allowed`, `{"where":{"x":1}}`: `at /where: property "x" not allowed`}},
		{"tagged embedded pointer to an unexported struct cannot be set", reflect.TypeFor[taggedHiddenPtr](), []string{"h"},
			[]string{`{}`}, map[string]string{`{"h":{}}`: "at /h: not allowed", `{"H":null}`: "at /H: not allowed"}},
		{"exported embedded pointer inside an unexported embedded struct", reflect.TypeFor[viaUnexported](), []string{"zone"},
			[]string{`{"zone":"z"}`}, map[string]string{`{"zone":1}`: "at /zone: want null or string"}},
		{"struct embedding a pointer to itself", reflect.TypeFor[selfEmbed](), []string{"X"},
			[]string{`{"X":1}`}, map[string]string{`{"selfEmbed":{}}`: `property "selfEmbed" not allowed`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, _ := decode(t, tt.typ)["properties"].(map[string]any)
			assert.ElementsMatch(t, tt.members, keys(props))
			for _, in := range tt.accept {
				assert.NoError(t, validate(t, tt.typ, in), in)
				assertDecodes(t, tt.typ, in)
			}
			for in, want := range tt.refuse {
				assert.ErrorContains(t, validate(t, tt.typ, in), want, in)
			}
		})
	}
}

type node struct {
	Name     string `json:"name"`
	Children []node `json:"children"`
	Next     *node  `json:"next"`
}

type ping struct {
	N    int   `json:"n"`
	Pong *pong `json:"pong"`
}

type pong struct {
	Ping *ping `json:"ping"`
}

func TestForRecursiveTypes(t *testing.T) {
	s := decode(t, reflect.TypeFor[node]())
	assert.Equal(t, "#/$defs/node", s["$ref"])
	def := s["$defs"].(map[string]any)["node"].(map[string]any)
	props := def["properties"].(map[string]any)
	assert.Equal(t, map[string]any{"$ref": "#/$defs/node"}, props["next"])
	assert.Equal(t, map[string]any{"$ref": "#/$defs/node"}, props["children"].(map[string]any)["items"])

	typ := reflect.TypeFor[node]()
	for _, in := range []string{`{"name":"a","children":[],"next":null}`, `{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}],"next":{"name":"d","next":{"name":"e"}}}`} {
		assert.NoError(t, validate(t, typ, in), in)
		assertDecodes(t, typ, in)
	}
	assert.ErrorContains(t, validate(t, typ, `{"name":"a","children":{}}`), "at /children: want null or array, got object")
	assert.ErrorContains(t, validate(t, typ, `{"next":{"next":{"name":5}}}`), "at /next/next/name: want null or string, got number")
	assert.ErrorContains(t, validate(t, typ, `{"children":[{"children":[{"nmae":"x"}]}]}`), `at /children/0/children/0: property "nmae" not allowed`)

	mutual := reflect.TypeFor[ping]()
	assert.NoError(t, validate(t, mutual, `{"n":1,"pong":{"ping":{"n":2,"pong":{"ping":null}}}}`))
	assert.ErrorContains(t, validate(t, mutual, `{"pong":{"ping":{"n":"x"}}}`), "at /pong/ping/n")

	assert.NoError(t, validate(t, reflect.TypeFor[selfSlice](), `[[],[[]],null]`))
	assert.ErrorContains(t, validate(t, reflect.TypeFor[selfSlice](), `[[1]]`), "at /0/0: want null or array, got number")
	assert.NoError(t, validate(t, reflect.TypeFor[selfMap](), `{"a":{"b":{}}}`))
	assert.ErrorContains(t, validate(t, reflect.TypeFor[selfMap](), `{"a":{"b":1}}`), "at /a/b")
}

type manyFields struct {
	Z, Y, X, W, V, U, T, S, R, Q, P, O, N, M, L, K, J, I, H, G, F, E, D, C, B, A string
	Maps                                                                         map[string]map[string]inner
	Nodes                                                                        []node
	Pings                                                                        map[string]*ping
}

func TestForIsDeterministic(t *testing.T) {
	typ := reflect.TypeFor[manyFields]()
	first := typeschema.For(typ)
	for range 20 {
		require.True(t, bytes.Equal(first, typeschema.For(typ)), "For gives different documents")
	}
	// Map keys come out sorted: decoding and encoding again changes nothing.
	dec := json.NewDecoder(bytes.NewReader(first))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	again, err := json.Marshal(v)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(first, again), "re-encoding changes the document")
	assert.True(t, strings.HasPrefix(string(first), `{"$defs":`), "sorted keys put $defs first: %.40s", first)
}

func TestBigIntegersStayExact(t *testing.T) {
	i64, u64 := reflect.TypeFor[int64](), reflect.TypeFor[uint64]()
	assert.NoError(t, validate(t, i64, `9007199254740993`))
	assert.NoError(t, validate(t, i64, `9223372036854775807`))
	assert.NoError(t, validate(t, i64, `-9223372036854775808`))
	assert.ErrorContains(t, validate(t, i64, `9223372036854775808`), "at (root): want <= 9223372036854775807, got 9223372036854775808")
	assert.NoError(t, validate(t, u64, `18446744073709551615`))
	assert.ErrorContains(t, validate(t, u64, `18446744073709551616`), "want <=")
	assert.ErrorContains(t, validate(t, u64, `-1`), "want >= 0")
	assert.ErrorContains(t, validate(t, i64, `1e9999999`), "at (root): number too large to check", "no panic on a huge exponent")
}

func TestNullIsAcceptedEverywhere(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[tagged](), reflect.TypeFor[node](), reflect.TypeFor[[]byte](), reflect.TypeFor[time.Time](),
		reflect.TypeFor[map[int]int](), reflect.TypeFor[int8](), reflect.TypeFor[json.Number](), reflect.TypeFor[fmt.Stringer]()} {
		assert.NoError(t, validate(t, typ, `null`), "%v", typ)
		assertDecodes(t, typ, `null`)
	}
	assert.NoError(t, validate(t, reflect.TypeFor[tagged](), `{"name":null,"other_name":null,"zone":null,"quoted_obj":null}`))
	assert.NoError(t, validate(t, reflect.TypeFor[[]int](), `[null,1]`))
	assert.NoError(t, validate(t, reflect.TypeFor[map[string]int](), `{"a":null}`))
}

func TestMapKeys(t *testing.T) {
	typ := reflect.TypeFor[map[int8]string]()
	for _, in := range []string{`{"1":"a","-128":"b","+7":"c","007":"d"}`, `{}`} {
		assert.NoError(t, validate(t, typ, in), in)
		assertDecodes(t, typ, in)
	}
	for _, in := range []string{`{"x":"a"}`, `{"128":"a"}`, `{"1.0":"a"}`, `{"":"a"}`} {
		assert.ErrorContains(t, validate(t, typ, in), "at (root)", in)
		assert.Error(t, json.Unmarshal([]byte(in), new(map[int8]string)), in)
	}
	assert.ErrorContains(t, validate(t, reflect.TypeFor[map[uint]int](), `{"-1":1}`), "at (root)")
	assert.ErrorContains(t, validate(t, reflect.TypeFor[map[float64]int](), `{}`), "want null, got object")
}

func TestJSONNumber(t *testing.T) {
	typ := reflect.TypeFor[json.Number]()
	for _, in := range []string{`5`, `-1.5e300`, `"12"`, `"1e400"`, `null`} {
		assert.NoError(t, validate(t, typ, in), in)
		assertDecodes(t, typ, in)
	}
	for _, in := range []string{`"abc"`, `"01"`, `"1."`, `true`, `[]`} {
		assert.ErrorContains(t, validate(t, typ, in), "at (root)", in)
		assert.Error(t, json.Unmarshal([]byte(in), new(json.Number)), in)
	}
}

func TestCaseInsensitiveMembers(t *testing.T) {
	type kelvin struct {
		Kind string `json:"kind"`
		Size int    `json:"size"`
	}
	typ := reflect.TypeFor[kelvin]()
	// encoding/json folds the Kelvin sign (U+212A) to K and the long s (U+017F) to S.
	for _, in := range []string{`{"KIND":"a"}`, "{\"\u212aind\":\"a\",\"\u017fize\":1}", `{"Kind":"a","kind":"b"}`} {
		assert.NoError(t, validate(t, typ, in), in)
		assertDecodes(t, typ, in)
	}
	assert.ErrorContains(t, validate(t, typ, "{\"\u212aIND\":1}"), "at /\u212aIND: want null or string, got number")
	assert.ErrorContains(t, validate(t, typ, `{"kinds":"a"}`), `property "kinds" not allowed`)
	assert.ErrorContains(t, validate(t, typ, "{\"k\u0131nd\":\"a\"}"), "not allowed", "dotless i does not fold to i")
}

func TestForLargeTypesTerminateAndCompile(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[http.Request](), reflect.TypeFor[tls.Config](), reflect.TypeFor[ast.File]()} {
		done := make(chan error, 1)
		go func() {
			_, err := typeschema.Compile(typ)
			done <- err
		}()
		select {
		case err := <-done:
			assert.NoError(t, err, "%v", typ)
		case <-time.After(10 * time.Second):
			t.Fatalf("Compile(%v) does not terminate", typ)
		}
	}
	assert.NoError(t, validate(t, reflect.TypeFor[http.Request](), `{"Method":"GET","Header":{"A":["b"]},"Body":null}`))
	assert.ErrorContains(t, validate(t, reflect.TypeFor[http.Request](), `{"Body":"x"}`), "at /Body: want null, got string")
}

func TestEncodingJSONPanicsOnTaggedHiddenPointer(t *testing.T) {
	assert.Panics(t, func() { _ = json.Unmarshal([]byte(`{"h":null}`), new(taggedHiddenPtr)) },
		"if encoding/json stops panicking here, the schema of such members may accept null again")
}
