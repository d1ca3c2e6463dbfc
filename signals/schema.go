package signals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer renders the schema library's own messages for the kinds describe has no
// wording for.
var printer = message.NewPrinter(language.English)

// MaxSchemaErrors is the most messages a *SchemaError or *CompileError carries; the last
// one says how many more there were.
const MaxSchemaErrors = 10

// schemaURL is where a compiled schema document lives. It is never fetched: the loader
// refuses every URL it is asked for, and only the standard meta-schemas (embedded in the
// library) resolve without it.
const schemaURL = schemaBase + "schema.json"

// schemaBase is the base against which relative references resolve; it is trimmed from
// messages so that a refused "other.json" reads as such.
const schemaBase = "mem://gateflow/"

// Schema is a compiled JSON Schema. The zero value and a nil *Schema accept any JSON
// value. A Schema is safe for concurrent use.
type Schema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
}

// CompileCode says why a schema did not compile.
type CompileCode string

// Reasons a schema does not compile.
const (
	// CompileBadJSON: the schema is not valid JSON.
	CompileBadJSON CompileCode = "bad_json"
	// CompileInvalid: the schema is JSON but not a valid JSON Schema.
	CompileInvalid CompileCode = "invalid"
	// CompileRemoteRef: the schema refers to another document ($ref or $schema), which
	// is never fetched.
	CompileRemoteRef CompileCode = "remote_ref"
)

// CompileError is returned by CompileSchema for a schema that cannot be used.
type CompileError struct {
	// Code says why.
	Code CompileCode
	// URL is the refused document, for CompileRemoteRef.
	URL string
	// Errors are readable messages, e.g. `at /type: want array or string, got number`.
	Errors []string
	// Err is the error from the JSON decoder or the schema library.
	Err error
}

// Error implements error.
func (e *CompileError) Error() string {
	switch e.Code {
	case CompileBadJSON:
		return "signals: schema is not valid JSON: " + strings.Join(e.Errors, "; ")
	case CompileRemoteRef:
		return fmt.Sprintf("signals: schema refers to %q: only references inside the schema are allowed (e.g. \"#/$defs/name\")", e.URL)
	default:
		return "signals: invalid schema: " + strings.Join(e.Errors, "; ")
	}
}

// Unwrap returns the underlying error.
func (e *CompileError) Unwrap() error { return e.Err }

// SchemaError is returned by Schema.Validate for a payload that is not valid JSON or does
// not match the schema. Its messages are short, sorted and stable, one per problem.
type SchemaError struct {
	// Errors are messages such as `at /age: want integer, got string` or
	// `at (root): missing property "name"`.
	Errors []string
}

// Error implements error.
func (e *SchemaError) Error() string {
	return "payload does not match the schema: " + strings.Join(e.Errors, "; ")
}

// refuseLoader is the schema loader: it loads nothing, so a schema can only refer to
// itself and to the embedded meta-schemas.
type refuseLoader struct{}

type remoteRefError struct{ url string }

func (e *remoteRefError) Error() string { return "remote references are not allowed" }

// Load implements jsonschema.URLLoader by refusing.
func (refuseLoader) Load(url string) (any, error) { return nil, &remoteRefError{url: url} }

// isNoSchema reports whether raw means "no schema": empty, blank or the JSON null (a nil
// json.RawMessage that went through encoding/json).
func isNoSchema(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// CompileSchema compiles a JSON Schema. An empty raw schema (or null) accepts anything.
// Schemas without "$schema" are draft 2020-12. Format keywords are asserted (a value
// with "format": "email" must be an email address). References must stay inside the
// schema ("#/$defs/x"); anything else is refused with a *CompileError of code
// CompileRemoteRef, so compiling never reads the network or the disk. Every failure is a
// *CompileError.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	if isNoSchema(raw) {
		return &Schema{}, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &CompileError{Code: CompileBadJSON, Errors: []string{err.Error()}, Err: err}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, &CompileError{Code: CompileInvalid, Errors: []string{err.Error()}, Err: err}
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, compileError(err)
	}
	return &Schema{raw: append(json.RawMessage(nil), raw...), compiled: compiled}, nil
}

func compileError(err error) *CompileError {
	var load *jsonschema.LoadURLError
	if errors.As(err, &load) {
		var remote *remoteRefError
		if errors.As(load.Err, &remote) {
			url := strings.TrimPrefix(remote.url, schemaBase)
			return &CompileError{Code: CompileRemoteRef, URL: url,
				Errors: []string{"refers to " + strconv.Quote(url)}, Err: err}
		}
	}
	var meta *jsonschema.SchemaValidationError
	if errors.As(err, &meta) {
		var verr *jsonschema.ValidationError
		if errors.As(meta.Err, &verr) {
			return &CompileError{Code: CompileInvalid, Errors: messages(verr), Err: err}
		}
	}
	msg := strings.ReplaceAll(err.Error(), schemaURL, "")
	return &CompileError{Code: CompileInvalid, Errors: []string{msg}, Err: err}
}

// MustCompileSchema is CompileSchema for schemas written in the program; it panics on error.
func MustCompileSchema(raw json.RawMessage) *Schema {
	s, err := CompileSchema(raw)
	if err != nil {
		panic(err)
	}
	return s
}

// Raw returns the schema as given to CompileSchema, or nil for "accept anything".
func (s *Schema) Raw() json.RawMessage {
	if s == nil {
		return nil
	}
	return s.raw
}

// Validate checks payload against the schema. An empty payload is the JSON null. A
// payload that is not valid JSON, or does not match, gives a *SchemaError; a nil or empty
// Schema accepts any valid JSON.
func (s *Schema) Validate(payload json.RawMessage) error {
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = json.RawMessage("null")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return &SchemaError{Errors: []string{"not valid JSON: " + err.Error()}}
	}
	if s == nil || s.compiled == nil {
		return nil
	}
	if path, ok := outsizedNumber(v, ""); ok {
		return &SchemaError{Errors: []string{"at " + orRoot(path) + ": number too large to check"}}
	}
	err = s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if errors.As(err, &verr) {
		return &SchemaError{Errors: messages(verr)}
	}
	return &SchemaError{Errors: []string{err.Error()}}
}

// messages flattens a validation error tree into sorted, deduplicated, capped messages,
// one per leaf ("at <pointer>: <what>").
func messages(root *jsonschema.ValidationError) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		for _, m := range describe(e.ErrorKind) {
			line := "at " + pointer(e.InstanceLocation) + ": " + m
			if !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
		}
	}
	walk(root)
	sort.Strings(out)
	if len(out) > MaxSchemaErrors {
		more := len(out) - (MaxSchemaErrors - 1)
		out = append(out[:MaxSchemaErrors-1], fmt.Sprintf("and %d more", more))
	}
	return out
}

// pointer renders an instance location as a JSON pointer, "(root)" for the whole value.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "(root)"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// describe turns one error kind into short messages; kinds that name several properties
// give one message per property, in sorted order.
func describe(k jsonschema.ErrorKind) []string {
	switch k := k.(type) {
	case *kind.Type:
		return []string{"want " + strings.Join(k.Want, " or ") + ", got " + k.Got}
	case *kind.Required:
		return eachProperty(k.Missing, "missing property %s")
	case *kind.AdditionalProperties:
		return eachProperty(k.Properties, "property %s not allowed")
	case *kind.Enum:
		want := make([]string, 0, len(k.Want))
		for i, w := range k.Want {
			if i == 5 {
				want = append(want, fmt.Sprintf("… (%d in all)", len(k.Want)))
				break
			}
			want = append(want, value(w))
		}
		return []string{"want one of " + strings.Join(want, ", ") + ", got " + value(k.Got)}
	case *kind.Const:
		return []string{"want " + value(k.Want) + ", got " + value(k.Got)}
	case *kind.MinLength:
		return []string{fmt.Sprintf("want at least %d characters, got %d", k.Want, k.Got)}
	case *kind.MaxLength:
		return []string{fmt.Sprintf("want at most %d characters, got %d", k.Want, k.Got)}
	case *kind.MinItems:
		return []string{fmt.Sprintf("want at least %d items, got %d", k.Want, k.Got)}
	case *kind.MaxItems:
		return []string{fmt.Sprintf("want at most %d items, got %d", k.Want, k.Got)}
	case *kind.MinProperties:
		return []string{fmt.Sprintf("want at least %d properties, got %d", k.Want, k.Got)}
	case *kind.MaxProperties:
		return []string{fmt.Sprintf("want at most %d properties, got %d", k.Want, k.Got)}
	case *kind.Minimum:
		return []string{"want >= " + number(k.Want) + ", got " + number(k.Got)}
	case *kind.Maximum:
		return []string{"want <= " + number(k.Want) + ", got " + number(k.Got)}
	case *kind.ExclusiveMinimum:
		return []string{"want > " + number(k.Want) + ", got " + number(k.Got)}
	case *kind.ExclusiveMaximum:
		return []string{"want < " + number(k.Want) + ", got " + number(k.Got)}
	case *kind.MultipleOf:
		return []string{"want a multiple of " + number(k.Want) + ", got " + number(k.Got)}
	case *kind.Pattern:
		if k.Want == NonBlankPattern {
			return []string{"want a non-blank string (not empty, not only spaces), got " + blank(k.Got)}
		}
		return []string{"want a string matching " + strconv.Quote(k.Want) + ", got " + strconv.Quote(clip(k.Got))}
	case *kind.Format:
		return []string{"want format " + strconv.Quote(k.Want) + ", got " + value(k.Got)}
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			idx := make([]string, len(k.Subschemas))
			for i, n := range k.Subschemas {
				idx[i] = strconv.Itoa(n)
			}
			return []string{"want exactly one oneOf match, got " + strings.Join(idx, ", ")}
		}
		return []string{"want exactly one oneOf match, got none"}
	case *kind.Not:
		return []string{"must not match the \"not\" schema"}
	case *kind.FalseSchema:
		return []string{"not allowed"}
	default:
		return []string{strings.ReplaceAll(k.LocalizedString(printer), schemaURL, "")}
	}
}

func eachProperty(props []string, format string) []string {
	sorted := append([]string(nil), props...)
	sort.Strings(sorted)
	out := make([]string, len(sorted))
	for i, p := range sorted {
		out[i] = fmt.Sprintf(format, strconv.Quote(p))
	}
	return out
}

// value renders a JSON value briefly: strings quoted and clipped, objects and arrays by kind.
func value(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(clip(v))
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "null"
	default:
		return fmt.Sprint(v)
	}
}

func clip(s string) string {
	const max = 40
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

func number(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// maxNumberLen and maxExponent bound the numbers Validate checks: the validator cannot
// parse exponents far beyond float64's (it panicked on 1e-9999999 against a minimum), and
// a number with thousands of digits costs time and a message as long.
const (
	maxNumberLen = 100
	maxExponent  = 400
)

// outsizedNumber finds a number in v (decoded with json.Number) beyond the bounds and
// returns its JSON Pointer.
func outsizedNumber(v any, path string) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if len(s) > maxNumberLen {
			return path, true
		}
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
			if err != nil || exp > maxExponent || exp < -maxExponent {
				return path, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if p, ok := outsizedNumber(x[k], path+"/"+pointerEscape(k)); ok {
				return p, true
			}
		}
	case []any:
		for i, e := range x {
			if p, ok := outsizedNumber(e, path+"/"+strconv.Itoa(i)); ok {
				return p, true
			}
		}
	}
	return "", false
}

func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}
