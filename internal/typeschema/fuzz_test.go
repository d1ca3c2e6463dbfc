package typeschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/gateflow/gateflow/signals"
)

type fuzzInner struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

type fuzzPlace struct {
	Region string
	Zone   *string `json:"zone"`
}

type fuzzNode struct {
	V    int8       `json:"v"`
	Next *fuzzNode  `json:"next"`
	Kids []fuzzNode `json:"kids"`
}

// fuzzInput has a member of every kind the schema describes on its own (no custom
// decoders: what those accept is theirs to say).
type fuzzInput struct {
	Name     string          `json:"name"`
	Count    int             `json:"count"`
	Small    int8            `json:"small"`
	U        uint            `json:"u"`
	U64      uint64          //
	Ratio    float64         `json:"ratio"`
	F32      float32         //
	OK       bool            `json:"ok"`
	When     time.Time       `json:"when"`
	WhenPtr  *time.Time      //
	Blob     []byte          `json:"blob"`
	Tags     []string        `json:"tags"`
	Labels   map[string]int  `json:"labels"`
	IntKeys  map[int16]bool  //
	UintKeys map[uint8]any   //
	Inner    *fuzzInner      `json:"inner"`
	Servers  []fuzzInner     //
	Pair     [2]uint8        //
	Any      any             `json:"any"`
	Raw      json.RawMessage `json:"raw"`
	Num      json.Number     `json:"num"`
	Stringer fmt.Stringer    //
	QInt     int             `json:"qint,string"`
	QUint    *uint8          `json:"quint,string"`
	QBool    bool            `json:"qbool,string"`
	QStr     string          `json:"qstr,string"`
	QFloat   float32         `json:"qfloat,string"`
	QNum     json.Number     `json:"qnum,string"`
	Node     fuzzNode        `json:"node"`
	Ab       int             `json:"ab"`
	AB       string          `json:"AB"`
	Skip     string          `json:"-"`
	hidden   int
	fuzzPlace
}

var fuzzSeeds = []string{
	`{"name":"a","count":-3,"small":127,"u":7,"U64":18446744073709551615,"ratio":1.5e300,"F32":3.4e38,"ok":true,
	  "when":"2024-02-29T23:59:59.5+01:00","WhenPtr":null,"blob":"aGk=","tags":["x",null],"labels":{"a":1},
	  "IntKeys":{"-32768":true,"+5":false},"UintKeys":{"255":[1,{"a":2}]},"inner":{"host":"h","port":65535},
	  "Servers":[{"HOST":"x"}],"Pair":[1,2,3],"any":{"x":[1e308,-2,"s",null]},"raw":{"anything":[]},"num":"12.5e-3",
	  "Stringer":null,"qint":"-9223372036854775808","quint":"255","qbool":"false","qstr":"\"s\\n\"","qfloat":"1.5",
	  "qnum":"7","node":{"v":-128,"next":{"v":1,"kids":[{"v":2}]}},"ab":1,"AB":"x","Ab":2,"Region":"eu","zone":"z"}`,
	`{}`, `null`, `[]`, `"x"`, `1`, `{"count":1.0}`, `{"count":1e3}`, `{"u":-0}`, `{"ratio":1e400}`, `{"F32":1e39}`,
	`{"any":1e400}`, `{"small":128}`, `{"u":-1}`, `{"when":"2024-02-30T00:00:00Z"}`, `{"when":"\u00324-01-01T00:00:00Z"}`,
	`{"blob":"aGk"}`, `{"IntKeys":{"x":true}}`, `{"UintKeys":{"256":1}}`, `{"qint":5}`, `{"qint":"1.5"}`,
	`{"qstr":"s"}`, `{"qfloat":"1e39"}`, `{"num":"01"}`, `{"Stringer":{}}`, `{"name":"a","name":5}`, `{"KIND":1}`,
	`{"Ab":"x"}`, `{"aB":1}`, `{"NAME":"x","ſmall":1,"\u212aids":[]}`, `{"node":{"kids":[{"kids":[{"v":"x"}]}]}}`,
	`{"Skip":"x"}`, `{"hidden":1}`, `{"Pair":[1,256]}`, `{"num":1e999999999}`, `{"ratio":1e-9999999}`, `{} x`, `{`,
	// One member each, so that mutations of one value keep the rest valid.
	`{"name":"a"}`, `{"count":-3}`, `{"small":-128}`, `{"u":7}`, `{"U64":1}`, `{"ratio":-0.5}`, `{"F32":1.5}`, `{"ok":false}`,
	`{"when":"2024-01-02T03:04:05Z"}`, `{"WhenPtr":"2024-01-02T03:04:05.5-07:00"}`, `{"blob":"aGVsbG8="}`, `{"tags":["a"]}`,
	`{"labels":{"a":-1}}`, `{"IntKeys":{"-1":true}}`, `{"UintKeys":{"1":null}}`, `{"inner":{"port":1}}`, `{"Servers":[{}]}`,
	`{"Pair":[0]}`, `{"any":[1.5]}`, `{"raw":1}`, `{"num":-1.5e3}`, `{"num":"-2"}`, `{"Stringer":null}`, `{"qint":"-1"}`,
	`{"quint":"7"}`, `{"quint":null}`, `{"qbool":"true"}`, `{"qstr":"\"\""}`, `{"qfloat":"-1.5e3"}`, `{"qnum":"-1"}`,
	`{"node":{"v":1}}`, `{"ab":1}`, `{"AB":"x"}`, `{"Region":"r"}`, `{"zone":"z"}`,
}

// FuzzValidate feeds arbitrary JSON to the schema of fuzzInput: each input as it is and
// as the value of each member. Validate must not panic, and whatever it accepts
// encoding/json must decode into a fuzzInput, except for the classes of input the package
// documentation lists (see documentedDifference).
func FuzzValidate(f *testing.F) {
	typ := reflect.TypeFor[fuzzInput]()
	s, err := Compile(typ)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range fuzzSeeds {
		f.Add([]byte(seed))
	}
	var members []string
	for _, m := range structFields(typ) {
		members = append(members, m.name)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if hugeExponents(data) > 1 {
			// The validator computes such numbers exactly (about 0.3s each for 1e999999
			// at an integer place); one per input is enough to cover them.
			return
		}
		checkAccepted(t, s, typ, data)
		if len(bytes.TrimSpace(data)) == 0 {
			return
		}
		for _, m := range members {
			checkAccepted(t, s, typ, []byte(`{"`+m+`":`+string(data)+`}`))
		}
	})
}

// checkAccepted fails if s accepts data but encoding/json cannot decode it into a new
// value of typ, outside the documented differences.
func checkAccepted(t *testing.T, s *signals.Schema, typ reflect.Type, data []byte) {
	t.Helper()
	verr := s.Validate(data)
	if verr != nil {
		var se *signals.SchemaError
		if !errors.As(verr, &se) {
			t.Fatalf("Validate returned %T, not a *signals.SchemaError: %v", verr, verr)
		}
		return
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return // signals reads an empty payload as null
	}
	if uerr := unmarshal(data, reflect.New(typ).Interface()); uerr != nil {
		if reason := documentedDifference(typ, data); reason != "" {
			return
		}
		t.Fatalf("the schema accepts %s but encoding/json refuses it: %v", data, uerr)
	}
}

func unmarshal(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("json.Unmarshal panicked: %v", r)
		}
	}()
	return json.Unmarshal(data, v)
}

// documentedDifference names the documented class raw (a value the schema accepted for
// t) falls in, or returns "".
func documentedDifference(t reflect.Type, raw []byte) string {
	if repeatsMember(raw) {
		return "an object repeats a member"
	}
	return lexical(t, raw)
}

// repeatsMember reports whether some object in raw has two members of the same name.
func repeatsMember(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		object bool
		names  map[string]bool
		key    bool // the next token of an object is a member name
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if name, ok := tok.(string); ok {
				if top.names[name] {
					return true
				}
				top.names[name] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.object {
			top.key = true // a value was read (or the object ends)
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, names: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].key = true
			}
		}
	}
}

// lexical walks raw as encoding/json decodes it into t and names the first value whose
// spelling, not its value, makes decoding fail: an integral number written with a
// fraction or exponent (or -0 for an unsigned kind), a number out of float range, or a
// time written with an escape.
func lexical(t reflect.Type, raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		if bytes.IndexByte(raw, '\\') >= 0 {
			return "a time written with an escape"
		}
		return ""
	case t.Kind() == reflect.Interface:
		if numberOutOfRange(raw) {
			return "a number out of float64 range in an interface"
		}
		return ""
	case implements(t, jsonUnmarshaler), implements(t, textUnmarshaler), t == numberType:
		return ""
	}
	number := raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')
	switch k := t.Kind(); {
	case number && k >= reflect.Int && k <= reflect.Int64:
		if bytes.ContainsAny(raw, ".eE") {
			return "an integer written with a fraction or exponent"
		}
	case number && k >= reflect.Uint && k <= reflect.Uintptr:
		if bytes.ContainsAny(raw, ".eE") || raw[0] == '-' {
			return "an unsigned integer written with a fraction, exponent or minus sign"
		}
	case number && (k == reflect.Float32 || k == reflect.Float64):
		if _, err := strconv.ParseFloat(string(raw), t.Bits()); err != nil {
			return "a number out of float range"
		}
	case k == reflect.Slice || k == reflect.Array:
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil {
			for _, e := range elems {
				if r := lexical(t.Elem(), e); r != "" {
					return r
				}
			}
		}
	case k == reflect.Map:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) == nil {
			for _, m := range members {
				if r := lexical(t.Elem(), m); r != "" {
					return r
				}
			}
		}
	case k == reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return ""
		}
		fields := structFields(t)
		for name, m := range members {
			f, ok := lookup(fields, name)
			if !ok {
				continue
			}
			if r := quotedLexical(f, m); r != "" {
				return r
			}
			if r := lexical(f.typ, m); !f.quoted && r != "" {
				return r
			}
		}
	}
	return ""
}

// quotedLexical: a ",string" float whose string holds a number out of float range.
func quotedLexical(f field, raw []byte) string {
	ft := f.typ
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if !f.quoted || (ft.Kind() != reflect.Float32 && ft.Kind() != reflect.Float64) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "null" {
		return ""
	}
	if _, err := strconv.ParseFloat(s, ft.Bits()); err != nil {
		return "a quoted number out of float range"
	}
	return ""
}

// lookup finds the member encoding/json decodes the key name into.
func lookup(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	for _, f := range fields {
		if foldKey(f.name) == foldKey(name) {
			return f, true
		}
	}
	return field{}, false
}

// numberOutOfRange reports whether a number in raw does not fit in a float64.
func numberOutOfRange(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			if _, err := strconv.ParseFloat(string(n), 64); err != nil {
				return true
			}
		}
	}
}

// hugeExponents counts the numbers in data written with an exponent of more than three
// digits.
func hugeExponents(data []byte) int {
	n := 0
	for i := 0; i < len(data); i++ {
		if data[i] != 'e' && data[i] != 'E' {
			continue
		}
		j := i + 1
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		k := j
		for k < len(data) && data[k] >= '0' && data[k] <= '9' {
			k++
		}
		if k-j > 3 {
			n++
		}
		i = k - 1
	}
	return n
}
