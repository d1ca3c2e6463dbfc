// Package typeschema owns the JSON Schema of a Go type: For derives, from a reflect.Type,
// the draft 2020-12 document describing the JSON that encoding/json decodes into a new
// value of that type, and Compile compiles it with signals.CompileSchema. A flow's start
// input is then checked by the same engine, with the same messages (`at /name: want
// null or string, got number`), as human input checked against a hand-written schema.
//
// The schema mirrors encoding/json: pointers are followed (and null is accepted at every
// place, as encoding/json accepts it for every type); time.Time is an RFC 3339
// "date-time" string; types with their own JSON encoding or decoding and empty
// interfaces accept anything; encoding.TextUnmarshaler types take a string; integers are
// bounded by their Go kind; []byte is a base64 string; maps take an object (integer keys
// must be decimal integers in range); structs take an object whose members are found as
// encoding/json finds them (json tags, "-", ",string", embedded structs flattened with
// the same precedence) and matched case-insensitively as encoding/json matches them.
// For requires nothing; ForStart, the schema of a flow's start input, requires the members
// that are neither omitempty/omitzero nor pointers, under their exact JSON name.
//
// The schema is stricter than encoding/json in a few places, on purpose: a struct
// refuses members it does not have ("additionalProperties": false), which encoding/json
// ignores; a time must be RFC 3339 (Go's parser also takes a one-digit hour, a comma
// before the fraction and an offset with hour 24 or minute 60); a []byte must be a
// base64 string (encoding/json also reads an array of numbers); a Go array checks every
// element of the JSON array (encoding/json skips those past its length unchecked).
//
// What the schema accepts, encoding/json decodes, except for these classes of input:
//
//   - integral numbers written with a fraction or an exponent (1.0, 1e3) for an integer
//     kind, and -0 for an unsigned kind: the validator sees the value, not its spelling,
//     and encoding/json refuses the spelling;
//   - numbers beyond the range of float64 (or float32, for a float32 field; also inside
//     the string of a ",string" float field, and anywhere inside a value decoded into an
//     empty interface), which encoding/json refuses as out of range: a "maximum" on a
//     number the validator cannot parse exactly (such as 1e-9999999) makes it panic;
//   - time.Time strings written with a JSON escape (e.g. "\u0032024-..."), which
//     time.Time.UnmarshalJSON reads without unescaping;
//   - objects repeating a member name: the validator keeps the last value, encoding/json
//     decodes each;
//   - values handed to a type's own decoder (json.Unmarshaler, encoding.TextUnmarshaler)
//     or to a type that only has its own encoding (json.Marshaler), which may refuse what
//     the schema lets through.
package typeschema
