package flow

import (
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
	timeType     = reflect.TypeOf(time.Time{})
	rawJSONType  = reflect.TypeOf(json.RawMessage(nil))
	marshalerTyp = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// SchemaOf derives the schema of t as encoding/json sees it. Types with their own JSON
// encoding and interfaces give an empty schema (anything goes).
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
	case t == rawJSONType, t.Implements(marshalerTyp), reflect.PointerTo(t).Implements(marshalerTyp):
		return &Schema{}
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
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string", Format: "byte"}
		}
		return &Schema{Type: "array", Items: schemaOf(t.Elem(), seen)}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: schemaOf(t.Elem(), seen)}
	case reflect.Struct:
		if seen[t] {
			return &Schema{Type: "object"}
		}
		seen[t] = true
		defer delete(seen, t)
		s := &Schema{Type: "object", Properties: map[string]*Schema{}}
		addFields(s, t, seen)
		return s
	}
	return &Schema{}
}

func addFields(s *Schema, t reflect.Type, seen map[reflect.Type]bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.Properties[name] = schemaOf(f.Type, seen)
	}
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
