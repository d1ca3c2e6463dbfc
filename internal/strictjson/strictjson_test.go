package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	Key string `json:"key_id"`
	N   int    `json:"n,omitempty"`
}

type base struct {
	Tag string `json:"tag,omitempty"`
}

type payload struct {
	base
	Gate    string            `json:"gate"`
	By      string            `json:"by"`
	At      time.Time         `json:"at,omitzero"`
	Data    json.RawMessage   `json:"data,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Any     any               `json:"any,omitempty"`
	Inner   *inner            `json:"inner,omitempty"`
	Inners  []inner           `json:"inners,omitempty"`
	Bytes   []byte            `json:"bytes,omitempty"`
	Skipped string            `json:"-"`
	private string
}

func TestUnmarshal(t *testing.T) {
	cases := []struct {
		name, in string
		want     payload
		err      string // empty: accepted
	}{
		{name: "exact keys", in: `{"gate":"ship","by":"alice"}`, want: payload{Gate: "ship", By: "alice"}},
		{name: "escaped key is the same key", in: `{"gate":"ship","\u0062y":"alice"}`, want: payload{Gate: "ship", By: "alice"}},
		{name: "promoted field", in: `{"tag":"x"}`, want: payload{base: base{Tag: "x"}}},
		{name: "null", in: `null`},
		{name: "raw data keeps any keys", in: `{"data":{"By":1,"by":2}}`, want: payload{Data: json.RawMessage(`{"By":1,"by":2}`)}},
		{name: "map keeps any keys", in: `{"labels":{"A":"1","a":"2"}}`, want: payload{Labels: map[string]string{"A": "1", "a": "2"}}},
		{name: "nested", in: `{"inner":{"key_id":"k"},"inners":[{"key_id":"a"},{"n":2}]}`, want: payload{Inner: &inner{Key: "k"}, Inners: []inner{{Key: "a"}, {N: 2}}}},
		{name: "case variant", in: `{"gate":"ship","by":"mallory","By":"alice"}`, err: `json key "By": not "by": keys are case-sensitive`},
		{name: "case variant alone", in: `{"BY":"alice"}`, err: `json key "BY": not "by"`},
		{name: "duplicate", in: `{"by":"mallory","by":"alice"}`, err: `json key "by": duplicate key`},
		{name: "duplicate escaped", in: `{"by":"mallory","\u0062y":"alice"}`, err: `json key "by": duplicate key`},
		{name: "unknown", in: `{"gate":"ship","verdict":"yes"}`, err: `json key "verdict": unknown key (payload has any, at, by, bytes, data, gate, inner, inners, labels, tag)`},
		{name: "skipped field is unknown", in: `{"Skipped":"x"}`, err: `json key "Skipped": unknown key`},
		{name: "private field is unknown", in: `{"private":"x"}`, err: `json key "private": unknown key`},
		{name: "embedded struct itself is unknown", in: `{"base":{}}`, err: `json key "base": unknown key`},
		{name: "nested case variant", in: `{"inner":{"Key_ID":"k"}}`, err: `json key "Key_ID" in inner: not "key_id"`},
		{name: "element duplicate", in: `{"inners":[{},{"n":1,"n":2}]}`, err: `json key "n" in inners[1]: duplicate key`},
		{name: "duplicate in raw data", in: `{"data":{"a":1,"a":2}}`, err: `json key "a" in data: duplicate key`},
		{name: "duplicate in map", in: `{"labels":{"a":"1","a":"2"}}`, err: `json key "a" in labels: duplicate key`},
		{name: "duplicate deep in any", in: `{"any":[{"x":{"y":1,"y":1}}]}`, err: `json key "y" in any[0].x: duplicate key`},
		{name: "trailing data", in: `{"by":"a"} {"by":"b"}`, err: "data after the JSON value"},
		{name: "syntax", in: `{"by" "a"}`, err: "strictjson: invalid character"},
		{name: "truncated", in: `{"by":"a"`, err: "strictjson: "},
		{name: "empty", in: ``, err: "strictjson: EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got payload
			err := Unmarshal([]byte(tc.in), &got)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestKeyErrorIsTyped(t *testing.T) {
	var p payload
	err := Unmarshal([]byte(`{"By":"alice"}`), &p)
	var ke *KeyError
	require.True(t, errors.As(err, &ke), "%v", err)
	assert.Equal(t, KeyError{Key: "By", Reason: `not "by": keys are case-sensitive`}, *ke)
}

func TestUnmarshalNeedsAPointer(t *testing.T) {
	assert.ErrorContains(t, Unmarshal([]byte(`{}`), payload{}), "non-nil pointer")
	assert.ErrorContains(t, Unmarshal([]byte(`{}`), (*payload)(nil)), "non-nil pointer")
}

// keyVariants are spellings of the key "by": itself, case variants (including the
// Unicode folds encoding/json accepts) and unrelated keys.
var keyVariants = []string{"by", "by", "By", "bY", "BY", `\u0062y`, "b\u0079", "by ", "gate", "Gate", "comment", "x"}

// TestRandomObjectsAreReadOneWay is the property behind the decoder: over random
// objects made of exact, duplicate, case-variant and unknown keys, Unmarshal accepts
// exactly the objects whose keys are field names, each once, and then every reader — a
// map lookup of the exact key, encoding/json's own struct decoding — reads the same "by".
func TestRandomObjectsAreReadOneWay(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	type small struct {
		Gate string `json:"gate"`
		By   string `json:"by"`
	}
	accepted, refused := 0, 0
	for i := range 20000 {
		n := rng.IntN(5)
		var parts []string
		keys := map[string]int{}
		for j := range n {
			k := keyVariants[rng.IntN(len(keyVariants))]
			var decoded string
			require.NoError(t, json.Unmarshal([]byte(`"`+k+`"`), &decoded))
			keys[decoded]++
			parts = append(parts, fmt.Sprintf(`"%s":"v%d-%d"`, k, i, j))
		}
		in := "{" + strings.Join(parts, ",") + "}"
		wantOK := true
		for k, c := range keys {
			if c > 1 || (k != "gate" && k != "by") {
				wantOK = false
			}
		}
		var s small
		err := Unmarshal([]byte(in), &s)
		if !wantOK {
			require.Error(t, err, "%s", in)
			refused++
			continue
		}
		require.NoError(t, err, "%s", in)
		accepted++
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(in), &m))
		var byMap string
		if raw, ok := m["by"]; ok {
			require.NoError(t, json.Unmarshal(raw, &byMap))
		}
		var lenient small
		require.NoError(t, json.Unmarshal([]byte(in), &lenient))
		assert.Equal(t, byMap, s.By, "%s", in)
		assert.Equal(t, lenient, s, "%s", in)
	}
	assert.Greater(t, accepted, 1000)
	assert.Greater(t, refused, 1000)
}

func TestFieldsOf(t *testing.T) {
	got := fieldsOf(reflect.TypeFor[payload]())
	assert.Len(t, got, 10)
	assert.Equal(t, reflect.TypeFor[*inner](), got["inner"])
	assert.Equal(t, reflect.TypeFor[string](), got["tag"])
}
