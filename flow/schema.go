package flow

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Schema is a small JSON Schema describing a flow's input type, derived from the Go type
// at Define and published in the catalog. Clients use it to refuse input that cannot
// decode into the handler's type before anything starts.
type Schema struct {
	Type       string             `json:"type,omitempty"`
	Format     string             `json:"format,omitempty"`
	Properties map[string]*Schema `json:"properties,omitempty"`
	Items      *Schema            `json:"items,omitempty"`
	// AdditionalProperties describes map values; nil on structs, which accept only their
	// own properties.
	AdditionalProperties *Schema `json:"additionalProperties,omitempty"`
}

var (
	timeType        = reflect.TypeOf(time.Time{})
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	jsonMarshaler   = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// SchemaOf derives the schema of t as encoding/json decodes it. Types that decode
// themselves (json.Unmarshaler), interfaces and recursive references give an empty schema
// (anything goes), and so do types with their own JSON encoding; types decoded from text (encoding.TextUnmarshaler) take a string.
func SchemaOf(t reflect.Type) *Schema {
	return schemaOf(t, map[reflect.Type]bool{})
}

func schemaOf(t reflect.Type, seen map[reflect.Type]bool) *Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case t.Implements(jsonUnmarshaler), reflect.PointerTo(t).Implements(jsonUnmarshaler),
		t.Implements(jsonMarshaler), reflect.PointerTo(t).Implements(jsonMarshaler):
		// Types with their own JSON form: refusing what they accept would be worse than
		// letting the run's decoding report a mistake.
		return &Schema{}
	case t.Implements(textUnmarshaler), reflect.PointerTo(t).Implements(textUnmarshaler):
		return &Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string", Format: "byte"}
		}
		return &Schema{Type: "array", Items: schemaOf(t.Elem(), seen)}
	case reflect.Array:
		return &Schema{Type: "array", Items: schemaOf(t.Elem(), seen)}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: schemaOf(t.Elem(), seen)}
	case reflect.Struct:
		if seen[t] {
			return &Schema{} // a recursive reference: accept what the outer level describes
		}
		seen[t] = true
		defer delete(seen, t)
		s := &Schema{Type: "object", Properties: map[string]*Schema{}}
		addFields(s, t, seen, map[reflect.Type]bool{t: true})
		return s
	}
	return &Schema{}
}

// addFields adds t's JSON fields to s: its own fields first, then the fields promoted from
// embedded structs, which never replace a shallower field of the same name.
func addFields(s *Schema, t reflect.Type, seen, embedding map[reflect.Type]bool) {
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			isPtr := ft.Kind() == reflect.Pointer
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				// encoding/json cannot allocate an embedded pointer to an unexported struct.
				if !(isPtr && !f.IsExported()) && !embedding[ft] {
					embedded = append(embedded, ft)
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
		fs := schemaOf(f.Type, seen)
		if hasOption(opts, "string") {
			fs = &Schema{} // the ",string" option also accepts the value quoted
		}
		s.Properties[name] = fs
	}
	for _, et := range embedded {
		promoted := &Schema{Properties: map[string]*Schema{}}
		embedding[et] = true
		addFields(promoted, et, seen, embedding)
		delete(embedding, et)
		for k, v := range promoted.Properties {
			if _, ok := s.Properties[k]; !ok {
				s.Properties[k] = v
			}
		}
	}
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// Check reports the first way v (a value decoded from JSON) does not fit the schema,
// naming the path, e.g. `input.items[2]: want integer, got string`. Property names match
// case-insensitively, as encoding/json decodes them.
func (s *Schema) Check(path string, v any) error {
	if s == nil || s.Type == "" {
		return nil
	}
	if v == nil {
		return nil // null decodes to the zero value
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", path, jsonKind(v))
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := s.AdditionalProperties
			if s.Properties != nil || s.AdditionalProperties == nil {
				var ok bool
				sub, ok = s.property(k)
				if !ok {
					return fmt.Errorf("%s: unknown field %q (fields: %s)", path, k, strings.Join(s.propertyNames(), ", "))
				}
			}
			if err := sub.Check(path+"."+k, m[k]); err != nil {
				return err
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %s", path, jsonKind(v))
		}
		for i, e := range a {
			if err := s.Items.Check(fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: want a string, got %s", path, jsonKind(v))
		}
		if s.Format == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, v.(string)); err != nil {
				return fmt.Errorf("%s: want an RFC 3339 time, got %q", path, v)
			}
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: want true or false, got %s", path, jsonKind(v))
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want an integer, got %s", path, jsonKind(v))
		}
		if _, err := n.Int64(); err != nil {
			return fmt.Errorf("%s: want an integer, got %s", path, n)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s: want a number, got %s", path, jsonKind(v))
		}
	}
	return nil
}

func (s *Schema) property(name string) (*Schema, bool) {
	if p, ok := s.Properties[name]; ok {
		return p, true
	}
	for k, p := range s.Properties {
		if strings.EqualFold(k, name) {
			return p, true
		}
	}
	return nil, false
}

func (s *Schema) propertyNames() []string {
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return []string{"none"}
	}
	return names
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
