// Package strictjson decodes gateflow's own JSON payloads — the decisions people send
// (votes, answers, budget raises, pauses, cancels) and signal envelopes — strictly, so
// every reader of a payload reads the same thing.
//
// encoding/json matches object keys to struct fields case-insensitively, ignores keys it
// does not know and keeps the last of duplicate keys. A payload such as
// {"by":"mallory","By":"alice"} is read as mallory's by a checker that looks the key "by"
// up in a map, and as alice's by a workflow decoding it into a struct. Unmarshal refuses
// such a payload before anything reads it: every key of an object decoded into a struct
// must be exactly the JSON name of one of its fields, once. Nested structs (and slices,
// arrays and pointers of them) are checked the same way; a field whose type decodes itself
// (json.Unmarshaler, such as time.Time, or a nested payload type with its own strict
// UnmarshalJSON), a json.RawMessage, a map or an interface is left to its own decoding.
//
// The package owns only the key rules; what a field's value means is checked by its type.
package strictjson
