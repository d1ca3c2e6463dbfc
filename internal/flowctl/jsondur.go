package flowctl

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
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
	return withDurations(reflect.TypeOf(v), tree), nil
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

// ownEncoding reports whether t (or *t) writes its own JSON.
func ownEncoding(t reflect.Type) bool {
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

// withDurations rewrites the durations of tree, the decoded JSON of a value of type t.
func withDurations(t reflect.Type, tree any) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		if n, ok := tree.(json.Number); ok {
			if ns, err := n.Int64(); err == nil {
				return time.Duration(ns).String()
			}
		}
		return tree
	}
	if ownEncoding(t) {
		return tree
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if list, ok := tree.([]any); ok {
			for i := range list {
				list[i] = withDurations(t.Elem(), list[i])
			}
		}
	case reflect.Map:
		if o, ok := tree.(*object); ok {
			for k, v := range o.values {
				o.values[k] = withDurations(t.Elem(), v)
			}
		}
	case reflect.Struct:
		if o, ok := tree.(*object); ok {
			for name, ft := range jsonFields(t) {
				if sub, ok := o.values[name]; ok {
					o.values[name] = withDurations(ft, sub)
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
