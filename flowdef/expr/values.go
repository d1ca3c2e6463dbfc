package expr

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// typeName is the CEL name of a static type, "dyn" when unknown.
func typeName(t *types.Type) string {
	if t == nil {
		return "dyn"
	}
	return t.String()
}

func normalizeMap(m map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		n, err := normalize(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = n
	}
	return out, nil
}

// maxExactInt is the largest integer a float64 holds exactly.
const maxExactInt = 1 << 53

// normalize turns a recorded value into the JSON-like shapes CEL is given: whole numbers
// become int64, other numbers float64, and anything not JSON-like goes through a JSON
// round trip.
func normalize(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool, int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= maxExactInt {
			return int64(x), nil
		}
		return x, nil
	case float32:
		return normalize(float64(x))
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("bad number %q: %w", x, err)
		}
		return normalize(f)
	case map[string]any:
		return normalizeMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = n
		}
		return out, nil
	case json.RawMessage:
		return decodeJSON(x)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("value of type %T is not JSON-like: %w", v, err)
	}
	return decodeJSON(raw)
}

func decodeJSON(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding JSON value: %w", err)
	}
	return normalize(v)
}

// toGo converts a CEL value to a JSON-like Go value.
func toGo(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), nil
		}
		return float64(x), nil
	case types.Double:
		return float64(x), nil
	case types.String:
		return string(x), nil
	case types.Bytes:
		return base64.StdEncoding.EncodeToString([]byte(x)), nil
	case types.Timestamp:
		return x.Time.UTC().Format(time.RFC3339Nano), nil
	case types.Duration:
		return strconv.FormatFloat(x.Duration.Seconds(), 'f', -1, 64) + "s", nil
	case *types.Optional:
		if !x.HasValue() {
			return nil, nil
		}
		return toGo(x.GetValue())
	case ref.Type:
		return x.TypeName(), nil
	case *types.Err:
		return nil, x
	}
	switch v.Type() {
	case types.ListType:
		l := v.(traits.Lister)
		n := int(l.Size().(types.Int))
		out := make([]any, 0, n)
		for i := 0; i < n; i++ {
			e, err := toGo(l.Get(types.Int(i)))
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	case types.MapType:
		m := v.(traits.Mapper)
		out := map[string]any{}
		it := m.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			kv, err := toGo(k)
			if err != nil {
				return nil, err
			}
			e, err := toGo(m.Get(k))
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(kv)] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot convert a %s to a JSON-like value", v.Type().TypeName())
}
