package typeschema_test

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type differences struct {
	Count  int             `json:"count"`
	U      uint            `json:"u"`
	Ratio  float64         `json:"ratio"`
	F32    float32         `json:"f32"`
	Any    any             `json:"any"`
	QFloat float64         `json:"qfloat,string"`
	When   time.Time       `json:"when"`
	Name   string          `json:"name"`
	Addr   netip.Addr      `json:"addr"`
	Own    withMarshaler   `json:"own"`
	Raw    json.RawMessage `json:"raw"`
}

// TestDocumentedDifferences pins the classes of input, listed in the package
// documentation, that the schema accepts and encoding/json refuses. If one of these starts
// failing, the schema got stricter: update the documentation (and FuzzValidate's
// exclusions).
func TestDocumentedDifferences(t *testing.T) {
	typ := reflect.TypeFor[differences]()
	for _, tt := range []struct{ class, input string }{
		{"integer written with an exponent", `{"count":1e3}`},
		{"integer written with a fraction", `{"count":1.0}`},
		{"minus zero for an unsigned integer", `{"u":-0}`},
		{"float64 out of range", `{"ratio":1e400}`},
		{"float32 out of range", `{"f32":1e39}`},
		{"out of range in an interface", `{"any":[1e400]}`},
		{"out of range in a quoted float", `{"qfloat":"1e400"}`},
		{"time written with an escape", `{"when":"\u0032024-01-02T03:04:05Z"}`},
		{"repeated member", `{"name":5,"name":"x"}`},
		{"own text decoder", `{"addr":"not an address"}`},
		{"own encoding only", `{"own":"x"}`},
	} {
		assert.NoError(t, validate(t, typ, tt.input), "%s: %s", tt.class, tt.input)
		assert.Error(t, json.Unmarshal([]byte(tt.input), new(differences)), "%s: %s", tt.class, tt.input)
	}
}

// TestStricterThanEncodingJSON pins what the schema refuses on purpose although
// encoding/json decodes it.
func TestStricterThanEncodingJSON(t *testing.T) {
	type stricter struct {
		When time.Time `json:"when"`
		Blob []byte    `json:"blob"`
		Pair [2]int    `json:"pair"`
	}
	typ := reflect.TypeFor[stricter]()
	for _, tt := range []struct{ input, wantErr string }{
		{`{"unknown":1}`, `at (root): property "unknown" not allowed`},
		{`{"when":"2024-01-02T3:04:05Z"}`, "at /when"},
		{`{"when":"2024-01-02T03:04:05,5Z"}`, "at /when"},
		{`{"when":"2024-01-02T03:04:05+24:00"}`, "at /when"},
		{`{"blob":[104,105]}`, "at /blob: want null or string, got array"},
		{`{"pair":[1,2,"x"]}`, "at /pair/2"},
	} {
		assert.ErrorContains(t, validate(t, typ, tt.input), tt.wantErr, tt.input)
		assert.NoError(t, json.Unmarshal([]byte(tt.input), new(stricter)), tt.input)
	}
}
