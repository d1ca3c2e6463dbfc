package strictjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzUnmarshal: whatever the bytes, Unmarshal does not panic, and what it accepts is
// read the same by a map lookup of the exact keys and by encoding/json's own decoding,
// with no top-level key duplicated or spelled other than a field name.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"gate":"ship","vote":"approve","by":"mallory","By":"alice"}`,
		`{"gate":"ship","by":"alice"}`, `{"by":"a","by":"b"}`, `{"\u0062y":"a"}`, `{"BY":"x"}`,
		`{"inner":{"key_id":"k","Key_id":"j"}}`, `{"inners":[{"n":1},{"n":2,"n":3}]}`,
		`{"data":{"a":[1,{"b":2}]},"labels":{"k":"v"}}`, `null`, `[]`, `{"by":1}`, `{"by":"\u212aelvin"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p payload
		if err := Unmarshal(data, &p); err != nil {
			return
		}
		var lenient payload
		if err := json.Unmarshal(data, &lenient); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", data, err)
		}
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(lenient)
		if !bytes.Equal(a, b) {
			t.Fatalf("accepted %q, read two ways: %s and %s", data, a, b)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil || m == nil {
			return // null
		}
		fields := fieldsOf(typeOfPayload)
		seen := map[string]bool{}
		dec := json.NewDecoder(bytes.NewReader(data))
		_, _ = dec.Token()
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("accepted %q: %v", data, err)
			}
			k := tok.(string)
			if _, ok := fields[k]; !ok || seen[k] {
				t.Fatalf("accepted %q with key %q", data, k)
			}
			seen[k] = true
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatalf("accepted %q: %v", data, err)
			}
		}
		if raw, ok := m["by"]; ok {
			var by string
			if json.Unmarshal(raw, &by) == nil && by != p.By {
				t.Fatalf("accepted %q: by is %q, the map reads %q", data, p.By, by)
			}
		}
	})
}

var typeOfPayload = reflect.TypeFor[payload]()
