package flowctl

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"
)

// durationType is time.Duration, which encoding/json writes as nanoseconds.
var durationType = reflect.TypeFor[time.Duration]()

// jsonWithDurations is v as encoding/json writes it, except that every time.Duration
// field, element or map value is a string in Go's notation ("24h0m0s", "1m30s") instead
// of a count of nanoseconds: the form every -o json output of flowctl uses. It walks v's
// type beside the JSON, so only real durations change (a field named "timeout" that is not
// a time.Duration is kept); values behind interfaces or with their own MarshalJSON are
// written as they are. The wire format the workers send is untouched: this is flowctl's
// output layer only.
func jsonWithDurations(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if v == nil || !hasDuration(reflect.TypeOf(v), map[reflect.Type]bool{}) {
		return json.RawMessage(b), nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tree, err := decodeOrdered(dec)
	if err != nil {
		return nil, err
	}
	return withDurations(reflect.TypeOf(v), tree, toString), nil
}

// object is a JSON object that keeps its fields in order, so the output reads as
// encoding/json wrote it.
type object struct {
	keys   []string
	values map[string]any
}

// MarshalJSON writes the fields in their order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// decodeOrdered reads one JSON value: objects as *object, arrays as []any, numbers as
// json.Number.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{values: map[string]any{}}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			if _, dup := o.values[k]; !dup {
				o.keys = append(o.keys, k)
			}
			o.values[k] = v
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ']'
		return list, err
	}
	return tok, nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// fieldEncoded are types that write their own JSON but as their fields, under the
// fields' names (leaving some out): their durations are rewritten like a plain struct's.
var fieldEncoded = map[reflect.Type]bool{reflect.TypeFor[runs.Step](): true}

// ownEncoding reports whether t (or *t) writes its own JSON.
func ownEncoding(t reflect.Type) bool {
	if fieldEncoded[t] {
		return false
	}
	return t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)
}

// hasDuration reports whether a value of type t can hold a time.Duration that
// withDurations would rewrite.
func hasDuration(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == durationType {
		return true
	}
	if seen[t] || ownEncoding(t) {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return hasDuration(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() || f.Anonymous {
				if hasDuration(f.Type, seen) {
					return true
				}
			}
		}
	}
	return false
}

// toString writes a duration, JSON nanoseconds, as a string; toNanos reads one back.
func toString(v any) any {
	if n, ok := v.(json.Number); ok {
		if ns, err := n.Int64(); err == nil {
			return time.Duration(ns).String()
		}
	}
	return v
}

func toNanos(v any) any {
	if s, ok := v.(string); ok {
		if d, err := time.ParseDuration(s); err == nil {
			return json.Number(strconv.FormatInt(int64(d), 10))
		}
	}
	return v
}

// DecodeJSON reads what flowctl -o json wrote into v, a value of the type flowctl
// encoded (runs.Description for show, []runs.Summary for list, ...): its duration
// strings become time.Duration again. Go programs (and tests) that read flowctl's JSON
// use it instead of json.Unmarshal.
func DecodeJSON(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || !hasDuration(t, map[reflect.Type]bool{}) {
		return json.Unmarshal(data, v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tree, err := decodeOrdered(dec)
	if err != nil {
		return err
	}
	b, err := json.Marshal(withDurations(t, tree, toNanos))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// withDurations rewrites the durations of tree, the decoded JSON of a value of type t,
// with conv.
func withDurations(t reflect.Type, tree any, conv func(any) any) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		return conv(tree)
	}
	if ownEncoding(t) {
		return tree
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if list, ok := tree.([]any); ok {
			for i := range list {
				list[i] = withDurations(t.Elem(), list[i], conv)
			}
		}
	case reflect.Map:
		if o, ok := tree.(*object); ok {
			for k, v := range o.values {
				o.values[k] = withDurations(t.Elem(), v, conv)
			}
		}
	case reflect.Struct:
		if o, ok := tree.(*object); ok {
			for name, ft := range jsonFields(t) {
				if sub, ok := o.values[name]; ok {
					o.values[name] = withDurations(ft, sub, conv)
				}
			}
		}
	}
	return tree
}

// jsonFields maps the JSON names of struct type t's fields (those of embedded structs
// without a name of their own included) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !ownEncoding(ft) {
				for n, sub := range jsonFields(ft) {
					if _, shadowed := out[n]; !shadowed {
						out[n] = sub
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = ft
	}
	return out
}
