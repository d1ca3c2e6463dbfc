package typeschema

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// integerCandidates are spellings around the bounds of every integer size, with signs,
// leading zeros and junk.
func integerCandidates(r *rand.Rand) []string {
	out := []string{"", "+", "-", "0", "00", "-0", "+0", "--1", "+-1", "1a", " 1", "1 ", "1.0", "1e2", "0x10", "1_000", "٣"}
	for _, bits := range []int{8, 16, 32, 64} {
		for _, n := range []uint64{1<<(bits-1) - 1, 1 << (bits - 1), ^uint64(0) >> (64 - bits)} {
			for _, d := range []int64{-2, -1, 0, 1, 2} {
				v := strconv.FormatUint(n+uint64(d), 10)
				out = append(out, v, "-"+v, "+"+v, "000"+v, "-00"+v)
			}
		}
	}
	out = append(out, "18446744073709551616", "99999999999999999999", "-9223372036854775809")
	for range 2000 {
		v := strconv.FormatUint(r.Uint64()>>r.IntN(64), 10)
		out = append(out, v, "-"+v, "+"+v, "0"+v)
	}
	return out
}

func TestIntegerPatternsMatchStrconv(t *testing.T) {
	cands := integerCandidates(rand.New(rand.NewPCG(1, 2)))
	for _, bits := range []int{8, 16, 32, 64} {
		keyInt := regexp.MustCompile("^" + signedPattern(bits, true) + "$")
		quotedInt := regexp.MustCompile("^" + signedPattern(bits, false) + "$")
		uintRe := regexp.MustCompile("^" + unsignedPattern(bits) + "$")
		lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
		for _, s := range cands {
			n, err := strconv.ParseInt(s, 10, 64)
			want := err == nil && n >= lo && n <= hi
			assert.Equal(t, want, keyInt.MatchString(s), "int%d map key %q", bits, s)
			quoted := want && s[0] != '+' // a ",string" value starts with '-' or a digit
			assert.Equal(t, quoted, quotedInt.MatchString(s), "int%d quoted %q", bits, s)
			u, err := strconv.ParseUint(s, 10, 64)
			want = err == nil && u <= ^uint64(0)>>(64-bits)
			assert.Equal(t, want, uintRe.MatchString(s), "uint%d %q", bits, s)
		}
	}
}

func TestBase64PatternMatchesDecoder(t *testing.T) {
	re := regexp.MustCompile(base64Pattern)
	alphabet := []string{"A", "z", "+", "/", "=", "\n", "\r", "-", "_"}
	var walk func(prefix string, n int)
	count := 0
	walk = func(prefix string, n int) {
		_, err := base64.StdEncoding.DecodeString(prefix)
		if (err == nil) != re.MatchString(prefix) {
			t.Errorf("%q: decoder error %v, pattern match %v", prefix, err, re.MatchString(prefix))
		}
		count++
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			walk(prefix+c, n-1)
		}
	}
	walk("", 6)
	assert.Greater(t, count, 500000)
	for _, s := range []string{"aGk=", "aGVsbG8gd29ybGQ=", "aGVs\r\nbG8=", "aGk=\n"} {
		assert.True(t, re.MatchString(s), s)
	}
}

func TestDateTimeSchemaAcceptsOnlyWhatTimeDecodes(t *testing.T) {
	s, err := Compile(reflect.TypeFor[time.Time]())
	require.NoError(t, err)
	valid := []string{"2024-01-02T03:04:05Z", "2024-02-29T23:59:59.999999999+23:59", "0000-01-01T00:00:00-00:00", "9999-12-31T23:59:59.1Z"}
	for _, v := range valid {
		assert.NoError(t, s.Validate(json.RawMessage(strconv.Quote(v))), v)
	}
	// Every one-character change of the valid forms: what the schema accepts must decode.
	chars := "0123456789:-+.,TtZz ã"
	accepted := 0
	for _, v := range valid {
		for i := 0; i <= len(v); i++ {
			for _, c := range chars {
				for _, mut := range []string{v[:i] + string(c) + v[min(i+1, len(v)):], v[:i] + string(c) + v[i:], v[:i] + v[min(i+1, len(v)):]} {
					raw := json.RawMessage(strconv.Quote(mut))
					if s.Validate(raw) != nil {
						continue
					}
					accepted++
					var tm time.Time
					assert.NoError(t, json.Unmarshal(raw, &tm), "the schema accepts %s", raw)
				}
			}
		}
	}
	assert.Greater(t, accepted, 100)
	for _, bad := range []string{"2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-02t03:04:05Z", "2024-01-02T03:04:05z",
		"2024-01-02T23:59:60Z", "2024-01-02T3:04:05Z", "2024-01-02T03:04:05,5Z", "2024-01-02T03:04:05+24:00", "2024-01-02"} {
		assert.Error(t, s.Validate(json.RawMessage(strconv.Quote(bad))), bad)
	}
}

type quotedKinds struct {
	B   bool        `json:",string"`
	S   string      `json:",string"`
	I8  int8        `json:",string"`
	U16 *uint16     `json:",string"`
	F   float64     `json:",string"`
	N   json.Number `json:",string"`
}

func TestQuotedSchemasAcceptOnlyWhatEncodingJSONDecodes(t *testing.T) {
	s, err := Compile(reflect.TypeFor[quotedKinds]())
	require.NoError(t, err)
	contents := []string{"", "null", "nul", "true", "false", "True", `"x"`, `"a\"b"`, `"a\'b"`, `"\u00e9"`, `"\x"`, `"a`, `"a"b"`,
		"\"tab\tin\"", "0", "-0", "+1", "127", "128", "-128", "-129", "65535", "65536", "1.5", "1.", "-.5", "1e3", "1E+3",
		"0x10", "Inf", "-Inf", "NaN", "00", "1_0", " 1", "1 ", "abc", "[1]", "{}"}
	for _, field := range []string{"B", "S", "I8", "U16", "F", "N"} {
		for _, c := range contents {
			raw := json.RawMessage(`{"` + field + `":` + strconv.Quote(c) + `}`)
			if s.Validate(raw) != nil {
				continue
			}
			var v quotedKinds
			assert.NoError(t, json.Unmarshal(raw, &v), "the schema accepts %s", raw)
		}
	}
	for _, ok := range []string{`{"B":"true","S":"\"x\"","I8":"-128","U16":"65535","F":"1.5","N":"2e3"}`, `{"B":null,"S":"null","I8":"null"}`} {
		assert.NoError(t, s.Validate(json.RawMessage(ok)), ok)
	}
	for _, bad := range []string{`{"I8":5}`, `{"I8":"128"}`, `{"U16":"-1"}`, `{"B":"yes"}`, `{"S":"x"}`, `{"F":true}`} {
		assert.Error(t, s.Validate(json.RawMessage(bad)), bad)
	}
}

func TestFoldPatternFoldsAsEncodingJSON(t *testing.T) {
	tests := []struct {
		name    string
		exclude []string
	}{
		{"name", nil},
		{"kelvin_s", nil},
		{"a.b(c)", nil},
		{"İd", nil},
		{"ab", []string{"AB"}},
		{"ab", []string{"aB", "Ab"}},
		{"Name", []string{"NAME", "name"}},
		{"σς", []string{"Σς"}},
	}
	for _, tt := range tests {
		re := regexp.MustCompile(foldPattern(tt.name, tt.exclude))
		for _, key := range variants(tt.name) {
			want := foldKey(key) == foldKey(tt.name) && !contains(tt.exclude, key)
			assert.Equal(t, want, re.MatchString(key), "pattern %s, key %q", re, key)
		}
		for _, key := range []string{"", tt.name + "x", "x" + tt.name, strings.ToUpper(tt.name) + "\n"} {
			assert.False(t, re.MatchString(key), "pattern %s, key %q", re, key)
		}
	}
	assert.Equal(t, foldKey("K"), foldKey("\u212a"), "encoding/json folds the Kelvin sign to K")
	assert.Equal(t, foldKey("s"), foldKey("ſ"))
	assert.NotEqual(t, foldKey("i"), foldKey("İ"))
}

// variants lists every spelling of s built from the case-folding orbits of its runes.
func variants(s string) []string {
	out := []string{""}
	for _, r := range s {
		var next []string
		for _, p := range out {
			for _, o := range orbit(r) {
				next = append(next, p+string(o))
			}
		}
		out = next
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestFoldPatternsPickTheMemberEncodingJSONPicks(t *testing.T) {
	type collide struct {
		A int    `json:"ab"`
		B string `json:"AB"`
		C bool   `json:"aB"`
	}
	s, err := Compile(reflect.TypeFor[collide]())
	require.NoError(t, err)
	inputs := map[string]any{"ab": 1, "AB": "x", "aB": true, "Ab": 1}
	for key, val := range inputs {
		for _, v := range []any{1, "x", true} {
			raw, _ := json.Marshal(map[string]any{key: v})
			var got collide
			decodeErr := json.Unmarshal(raw, &got)
			assert.Equal(t, decodeErr == nil, s.Validate(raw) == nil, "%s (decoding: %v)", raw, decodeErr)
		}
		_ = val
	}
}

func TestBoundsOfEveryIntegerKind(t *testing.T) {
	type kinds struct {
		I8  int8
		I16 int16
		I32 int32
		I64 int64
		I   int
		U8  uint8
		U16 uint16
		U32 uint32
		U64 uint64
		U   uint
		P   uintptr
	}
	s, err := Compile(reflect.TypeFor[kinds]())
	require.NoError(t, err)
	for _, f := range reflect.VisibleFields(reflect.TypeFor[kinds]()) {
		bits := f.Type.Bits()
		signed := f.Type.Kind() >= reflect.Int && f.Type.Kind() <= reflect.Int64
		var vals []string
		if signed {
			lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
			vals = []string{strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10), strconv.FormatInt(lo, 10) + "9", strconv.FormatInt(hi, 10) + "0"}
			if bits < 64 {
				vals = append(vals, strconv.FormatInt(lo-1, 10), strconv.FormatInt(hi+1, 10))
			}
		} else {
			hi := uint64(math.MaxUint64) >> (64 - bits)
			vals = []string{"0", "-1", strconv.FormatUint(hi, 10), strconv.FormatUint(hi, 10) + "0"}
			if bits < 64 {
				vals = append(vals, strconv.FormatUint(hi+1, 10))
			}
		}
		for _, v := range vals {
			raw := json.RawMessage(`{"` + f.Name + `":` + v + `}`)
			var got kinds
			decodeErr := json.Unmarshal(raw, &got)
			assert.Equal(t, decodeErr == nil, s.Validate(raw) == nil, "%s (decoding: %v)", raw, decodeErr)
		}
	}
}
