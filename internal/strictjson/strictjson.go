package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// KeyError is a payload refused for one of its object keys. Path locates the object
// ("" for the top level, "verified" for a nested one, "items[2]" for an element).
type KeyError struct {
	// Path is where the object is, in JSON field names.
	Path string
	// Key is the refused key, as decoded.
	Key string
	// Reason says what is wrong: a duplicate, a case variant of a field's name, or unknown.
	Reason string
}

// Error reads `json key "By": ...` with the path when there is one.
func (e *KeyError) Error() string {
	where := ""
	if e.Path != "" {
		where = " in " + e.Path
	}
	return fmt.Sprintf("json key %q%s: %s", e.Key, where, e.Reason)
}

// Unmarshal decodes data into v, a non-nil pointer to a struct, after Check: every key
// must name one of the struct's fields exactly, once. The JSON null leaves v unchanged
// (encoding/json's convention). v's type must not itself implement json.Unmarshaler with
// a method that calls Unmarshal on the same type (decode into a type without the method,
// as in `type plain Vote`).
func Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: Unmarshal needs a non-nil pointer, got %T", v)
	}
	if err := Check(data, rv.Type().Elem()); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Check reports whether data is one JSON value whose objects follow the key rules for
// type t (see the package documentation). It decodes nothing.
func Check(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := checkValue(dec, t, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return errors.New("strictjson: data after the JSON value")
	}
	return nil
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checked reports whether values of t have key rules to check here: structs, and
// slices, arrays and pointers of them, that do not decode themselves.
func checked(t reflect.Type) (reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType) {
		return t, false
	}
	switch t.Kind() {
	case reflect.Struct:
		return t, !reflect.PointerTo(t).Implements(textUnmarshalerType)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 { // []byte is a base64 string
			return t, false
		}
		_, ok := checked(t.Elem())
		return t, ok
	}
	return t, false
}

// checkValue reads one value from dec, checking the keys of the objects type t decodes.
func checkValue(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("strictjson: %w", err)
	}
	d, isDelim := tok.(json.Delim)
	if !isDelim {
		return nil
	}
	inner, ok := (reflect.Type)(nil), false
	if t != nil {
		inner, ok = checked(t)
	}
	switch {
	case d == '{' && ok && inner.Kind() == reflect.Struct:
		return checkObject(dec, inner, path)
	case d == '[' && ok && (inner.Kind() == reflect.Slice || inner.Kind() == reflect.Array):
		return checkArray(dec, inner.Elem(), path)
	case d == '{':
		return skipObject(dec, path)
	default:
		return checkArray(dec, nil, path)
	}
}

func checkObject(dec *json.Decoder, t reflect.Type, path string) error {
	fields := fieldsOf(t)
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("strictjson: %w", err)
		}
		key := tok.(string) // the decoder only yields string keys inside an object
		ft, known := fields[key]
		switch {
		case seen[key]:
			return &KeyError{Path: path, Key: key, Reason: "duplicate key"}
		case !known:
			return unknownKey(t, fields, path, key)
		}
		seen[key] = true
		if err := checkValue(dec, ft, join(path, key)); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return wrap(err)
}

func unknownKey(t reflect.Type, fields map[string]reflect.Type, path, key string) error {
	for name := range fields {
		if strings.EqualFold(name, key) {
			return &KeyError{Path: path, Key: key, Reason: fmt.Sprintf("not %q: keys are case-sensitive", name)}
		}
	}
	return &KeyError{Path: path, Key: key, Reason: fmt.Sprintf("unknown key (%s has %s)", t.Name(), names(fields))}
}

// skipObject reads an object whose keys are not checked against fields (a map, an
// interface, raw JSON such as an answer's data), refusing duplicate keys still: no two
// readers (a schema, a handler's type, a hash) should pick different ones of two values.
func skipObject(dec *json.Decoder, path string) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("strictjson: %w", err)
		}
		key := tok.(string)
		if seen[key] {
			return &KeyError{Path: path, Key: key, Reason: "duplicate key"}
		}
		seen[key] = true
		if err := checkValue(dec, nil, join(path, key)); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return wrap(err)
}

func checkArray(dec *json.Decoder, elem reflect.Type, path string) error {
	for i := 0; dec.More(); i++ {
		if err := checkValue(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	_, err := dec.Token() // ']'
	return wrap(err)
}

func wrap(err error) error {
	if err != nil {
		return fmt.Errorf("strictjson: %w", err)
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func names(fields map[string]reflect.Type) string {
	out := make([]string, 0, len(fields))
	for n := range fields {
		out = append(out, n)
	}
	if len(out) == 0 {
		return "no fields"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf maps the JSON names of t's fields (as encoding/json encodes them, with the
// fields of untagged embedded structs promoted) to their types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for _, f := range reflect.VisibleFields(t) {
		name, skip := jsonName(f)
		if skip {
			continue
		}
		if _, dup := m[name]; !dup || len(f.Index) == 1 {
			m[name] = f.Type
		}
	}
	fieldCache.Store(t, m)
	return m
}

// jsonName is the key encoding/json uses for f, or skip for fields it does not encode
// (unexported, "-", and untagged embedded structs, whose fields are promoted instead).
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	name, _, _ := strings.Cut(tag, ",")
	ft := f.Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
		return "", true
	}
	if !f.IsExported() && !f.Anonymous {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}
