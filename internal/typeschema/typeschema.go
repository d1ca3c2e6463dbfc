package typeschema

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/signals"
)

// Draft is the JSON Schema dialect of every document For returns.
const Draft = "https://json-schema.org/draft/2020-12/schema"

var (
	timeType        = reflect.TypeFor[time.Time]()
	numberType      = reflect.TypeFor[json.Number]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
)

// For returns the JSON Schema (draft 2020-12, with "$schema") of the values
// encoding/json decodes into a new value of type t. Null is accepted everywhere, because
// encoding/json decodes null into every type. Structs refuse members they do not have
// and match member names case-insensitively, as encoding/json does; nothing is required.
// Types that decode themselves (json.Unmarshaler) or encode themselves (json.Marshaler),
// and empty interfaces, accept anything; types decoded from text
// (encoding.TextUnmarshaler) take a string; non-empty interfaces, channels, functions and
// complex numbers, which encoding/json cannot decode into, accept only null. A struct
// type used at more than one place is described once under "$defs" and referred to with
// "$ref", which also ends recursion. The document is deterministic: the same type always
// gives the same bytes (keys sorted). A nil t accepts anything.
func For(t reflect.Type) json.RawMessage {
	return build(t, false)
}

// ForStart is For with the members a start must give: a struct's members that are neither
// omitempty/omitzero nor pointers (nor reached through an embedded pointer) are
// "required", under their exact JSON name (another spelling, which encoding/json would
// also decode, does not count). A required member must also be non-empty: a string holds
// something besides white space (signals.NonBlankPattern) and a struct is an object, not
// null; the tag `gateflow:"allowempty"` lets such a member be empty (it is still
// required). Numbers, booleans, slices and maps may be zero. The input itself, when t is
// a struct with required members, must be an object: null, which would leave them out, is
// refused (a pointer type takes null). A flow's
// start input is checked against it, so a start that leaves out what the handler needs
// is refused before it starts.
func ForStart(t reflect.Type) json.RawMessage {
	return build(t, true)
}

// AllowEmpty is the option of the struct tag `gateflow:"allowempty"`: a member ForStart
// requires may be empty.
const AllowEmpty = "allowempty"

func build(t reflect.Type, required bool) json.RawMessage {
	b := &builder{
		required: required,
		defs:     map[string]any{},
		names:    map[reflect.Type]string{},
		taken:    map[string]bool{},
		sites:    map[string][]map[string]any{},
		building: map[reflect.Type]bool{},
	}
	root := b.schema(t)
	b.inlineSingleUse()
	doc := map[string]any{}
	if m, ok := root.(map[string]any); ok {
		for k, v := range m {
			doc[k] = v
		}
	}
	if required && plainStruct(t) && requires(t) {
		doc["type"] = "object" // null would leave out the required members
	}
	doc["$schema"] = Draft
	if len(b.defs) > 0 {
		doc["$defs"] = b.defs
	}
	out, err := json.Marshal(doc)
	if err != nil {
		// Unreachable: the document holds only maps, slices, strings, bools and integers.
		return json.RawMessage(`{"$schema":"` + Draft + `"}`)
	}
	return out
}

// Compile returns For(t) compiled with signals.CompileSchema, so that values are checked
// by the same engine, with the same messages (`at /path: ...`), as human input.
func Compile(t reflect.Type) (*signals.Schema, error) {
	return signals.CompileSchema(For(t))
}

// builder derives one document. Struct types (and named slice, array and map types that
// contain themselves) live in defs; every "$ref" to them is a fresh map recorded in sites,
// so that definitions used once can be put back in place.
type builder struct {
	defs     map[string]any
	names    map[reflect.Type]string
	taken    map[string]bool
	sites    map[string][]map[string]any
	building map[reflect.Type]bool
	// required: structs list their non-optional members as "required" (ForStart).
	required bool
}

func (b *builder) schema(t reflect.Type) any {
	if t == nil {
		return map[string]any{}
	}
	seen := map[reflect.Type]bool{}
	for t.Kind() == reflect.Pointer {
		if seen[t] {
			return map[string]any{} // a pointer to itself
		}
		seen[t] = true
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return map[string]any{"type": nullable("string"), "format": "date-time", "pattern": dateTimePattern}
	case t.Kind() == reflect.Interface:
		if t.NumMethod() == 0 {
			return map[string]any{}
		}
		// encoding/json cannot choose a concrete type for a non-empty interface.
		return map[string]any{"type": "null"}
	case implements(t, jsonUnmarshaler), implements(t, jsonMarshaler):
		// Types with their own JSON form: refusing what they accept would be worse than
		// letting the run's decoding report a mistake.
		return map[string]any{}
	case implements(t, textUnmarshaler):
		return map[string]any{"type": nullable("string")}
	case t == numberType:
		return map[string]any{"type": nullable("number", "string"), "pattern": numberPattern}
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": nullable("boolean")}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return map[string]any{"type": nullable("integer"),
			"minimum": int64(-1) << (bits - 1), "maximum": int64(1)<<(bits-1) - 1}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": nullable("integer"),
			"minimum": 0, "maximum": uint64(math.MaxUint64) >> (64 - t.Bits())}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": nullable("number")}
	case reflect.String:
		return map[string]any{"type": nullable("string")}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return b.bytes(t)
		}
		return b.named(t, func() any {
			return map[string]any{"type": nullable("array"), "items": b.schema(t.Elem())}
		})
	case reflect.Array:
		return b.named(t, func() any {
			return map[string]any{"type": nullable("array"), "items": b.schema(t.Elem())}
		})
	case reflect.Map:
		return b.named(t, func() any { return b.mapSchema(t) })
	case reflect.Struct:
		return b.def(t, func() any { return b.structSchema(t) })
	}
	// Channels, functions, complex numbers: encoding/json decodes only null into them.
	return map[string]any{"type": "null"}
}

// bytes describes a byte slice: a base64 string. If the element type has its own
// encoding, encoding/json writes the slice as an array, which it also reads back.
func (b *builder) bytes(t reflect.Type) any {
	s := map[string]any{"type": nullable("string"), "contentEncoding": "base64", "pattern": base64Pattern}
	if p := reflect.PointerTo(t.Elem()); p.Implements(jsonMarshaler) || p.Implements(textMarshaler) {
		s["type"] = nullable("string", "array")
		s["items"] = b.schema(t.Elem())
	}
	return s
}

func (b *builder) mapSchema(t reflect.Type) any {
	s := map[string]any{"type": nullable("object"), "additionalProperties": b.schema(t.Elem())}
	kt := t.Key()
	switch kind := kt.Kind(); {
	case implements(kt, textUnmarshaler), kind == reflect.String:
	case kind >= reflect.Int && kind <= reflect.Int64:
		s["propertyNames"] = map[string]any{"pattern": "^" + signedPattern(kt.Bits(), true) + "$"}
	case kind >= reflect.Uint && kind <= reflect.Uintptr:
		s["propertyNames"] = map[string]any{"pattern": "^" + unsignedPattern(kt.Bits()) + "$"}
	default:
		// encoding/json refuses every object for a map with such keys.
		return map[string]any{"type": "null"}
	}
	return s
}

func (b *builder) structSchema(t reflect.Type) any {
	fields := structFields(t)
	props := map[string]any{}
	patterns := map[string]any{}
	groups := map[string][]field{}
	var order []string
	for _, f := range fields {
		props[f.name] = b.fieldSchema(f)
		k := foldKey(f.name)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	// Keys that are not a member's exact name go to the first member (in field order)
	// with the same fold key, as in encoding/json.
	for _, k := range order {
		g := groups[k]
		if len(g) == 1 && !folds(g[0].name) {
			continue // no other spelling reaches it
		}
		others := make([]string, 0, len(g)-1)
		for _, f := range g[1:] {
			others = append(others, f.name)
		}
		patterns[foldPattern(g[0].name, others)] = b.fieldSchema(g[0])
	}
	s := map[string]any{"type": nullable("object"), "additionalProperties": false}
	if len(props) > 0 {
		s["properties"] = props
	}
	if b.required {
		var req []string
		for _, f := range fields {
			if !f.optional && !f.blocked {
				req = append(req, f.name)
			}
		}
		if len(req) > 0 {
			slices.Sort(req)
			s["required"] = req
		}
	}
	if len(patterns) > 0 {
		s["patternProperties"] = patterns
	}
	return s
}

// folds reports whether some other string has the same fold key as name.
func folds(name string) bool {
	for _, r := range name {
		if len(orbit(r)) > 1 {
			return true
		}
	}
	return false
}

func (b *builder) fieldSchema(f field) any {
	switch {
	case f.blocked:
		return false
	case f.quoted:
		return b.quotedSchema(f.typ)
	case !b.required || f.optional || f.allowEmpty:
		return b.schema(f.typ)
	case plainString(f.typ):
		return map[string]any{"type": "string", "pattern": signals.NonBlankPattern}
	case plainStruct(f.typ):
		return map[string]any{"type": "object", "allOf": []any{b.schema(f.typ)}}
	}
	return b.schema(f.typ)
}

// plainString reports a string type that encoding/json decodes as a plain string (not
// json.Number, not a type with its own decoding).
func plainString(t reflect.Type) bool {
	return t != nil && t.Kind() == reflect.String && t != numberType && !custom(t)
}

// plainStruct reports a struct type (not a pointer) whose members encoding/json decodes
// one by one (not time.Time, not a type with its own decoding).
func plainStruct(t reflect.Type) bool {
	return t != nil && t.Kind() == reflect.Struct && t != timeType && !custom(t)
}

// requires reports whether ForStart requires a member of struct type t.
func requires(t reflect.Type) bool {
	for _, f := range structFields(t) {
		if !f.optional && !f.blocked {
			return true
		}
	}
	return false
}

// custom reports a type with its own JSON or text decoding or encoding.
func custom(t reflect.Type) bool {
	return implements(t, jsonUnmarshaler) || implements(t, jsonMarshaler) || implements(t, textUnmarshaler)
}

// quotedSchema describes a field with the ",string" option: null, or a string holding a
// JSON literal of the field's kind (or "null").
func (b *builder) quotedSchema(t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := map[string]any{"type": nullable("string")}
	if implements(t, jsonUnmarshaler) || implements(t, textUnmarshaler) {
		return s // the type reads the string's content itself
	}
	var pattern string
	switch k := t.Kind(); {
	case t == numberType:
		pattern = quotedNumberPattern
	case k == reflect.Bool:
		pattern = quotedBoolPattern
	case k >= reflect.Int && k <= reflect.Int64:
		pattern = "^(?:null|" + signedPattern(t.Bits(), false) + ")$"
	case k >= reflect.Uint && k <= reflect.Uintptr:
		pattern = "^(?:null|" + unsignedPattern(t.Bits()) + ")$"
	case k == reflect.Float32 || k == reflect.Float64:
		pattern = quotedFloatPattern
	case k == reflect.String:
		pattern = quotedStringPattern
	default:
		return b.schema(t) // not quotable; structFields does not mark it
	}
	s["pattern"] = pattern
	return s
}

// def returns a reference to t's definition, building it the first time.
func (b *builder) def(t reflect.Type, build func() any) any {
	if name, ok := b.names[t]; ok {
		return b.ref(name)
	}
	name := b.newName(t)
	b.names[t] = name
	b.defs[name] = nil // reserved while it is built: recursive uses refer to it
	b.defs[name] = build()
	return b.ref(name)
}

// named builds a slice, array or map type in place unless it contains itself, in which
// case it becomes a definition.
func (b *builder) named(t reflect.Type, build func() any) any {
	if t.Name() == "" {
		return build() // only a named type can contain itself
	}
	if name, ok := b.names[t]; ok {
		return b.ref(name)
	}
	if b.building[t] {
		name := b.newName(t)
		b.names[t] = name
		return b.ref(name)
	}
	b.building[t] = true
	s := build()
	delete(b.building, t)
	if name, ok := b.names[t]; ok {
		b.defs[name] = s
		return b.ref(name)
	}
	return s
}

func (b *builder) ref(name string) any {
	site := map[string]any{"$ref": "#/$defs/" + name}
	b.sites[name] = append(b.sites[name], site)
	return site
}

// inlineSingleUse puts every definition referred to once in the place of its reference.
// A definition used once is not recursive: the reference from outside and one from
// inside itself would make two.
func (b *builder) inlineSingleUse() {
	for name, sites := range b.sites {
		if len(sites) != 1 {
			continue
		}
		body, ok := b.defs[name].(map[string]any)
		if !ok {
			continue
		}
		site := sites[0]
		delete(site, "$ref")
		for k, v := range body {
			site[k] = v
		}
		delete(b.defs, name)
	}
}

// newName gives t a definition name: its Go name with characters outside [A-Za-z0-9_.-]
// replaced, made unique with a numeric suffix.
func (b *builder) newName(t reflect.Type) string {
	base := t.Name()
	if base == "" {
		base = "struct"
	}
	base = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, base)
	name := base
	for i := 2; b.taken[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	b.taken[name] = true
	return name
}

// implements reports whether t or *t implements iface.
func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

// nullable is a "type" value: the given types and null.
func nullable(types ...string) []string {
	return append(types, "null")
}
