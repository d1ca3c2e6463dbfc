package signals

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEnvelope: envelopes arrive as JSON in the Signal gateflow.signal from anyone who can
// reach the server. Decoding and Validate never panic; a refusal is a *FieldError naming
// a field; an accepted envelope survives a JSON round trip, still valid and with the same
// fields, and a Buffer delivers it once for its name and key.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"name":"deploy-done","key":"v1.2.3","id":"sig-1","payload":{"ok":true},"sender":"alice"}`,
		`{"name":"deploy-done","id":"sig-1","sender":" "}`,
		`{"name":"-x","id":"a","sender":"bob"}`,
		`{"name":"x","key":"\u0001","id":"","sender":"bob","payload":null}`,
		`{"name":"x","id":"a","sender":"bob","payload":"\ud800"}`,
		`{"name":"x","id":"a","sender":"bob","sent_at":"2026-11-01T00:00:00Z"}`,
		`{"name":"` + strings.Repeat("n", 201) + `","id":"a","sender":"bob"}`,
		`[]`, `{"payload":1e999999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Envelope
		if err := json.Unmarshal(data, &e); err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Reason == "" {
				t.Fatalf("envelope %s: %T %v names no field", data, err, err)
			}
			return
		}
		if !utf8.ValidString(e.Key) || !utf8.ValidString(e.ID) || !utf8.ValidString(e.Sender) || ValidateName(e.Name) != nil {
			t.Fatalf("accepted %+v", e)
		}
		if !json.Valid(e.PayloadOrNull()) {
			t.Fatalf("accepted payload %q", e.Payload)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("envelope %+v does not encode: %v", e, err)
		}
		var back Envelope
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("envelope %+v: %s does not decode: %v", e, b, err)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("envelope %+v: after a round trip (%s) it is refused: %v", e, b, err)
		}
		if back.Name != e.Name || back.Key != e.Key || back.ID != e.ID || back.Sender != e.Sender || !back.SentAt.Equal(e.SentAt) || !sameJSON(back.PayloadOrNull(), e.PayloadOrNull()) {
			t.Fatalf("round trip changed %+v into %+v", e, back)
		}
		if e.ID == "" {
			return
		}
		buf := NewBuffer(0, 0)
		if !buf.Add(e) || buf.Add(e) {
			t.Fatalf("buffer: the same envelope (id %q) added twice", e.ID)
		}
		got, ok := buf.Take(e.Name, e.Key)
		if !ok || got.ID != e.ID {
			t.Fatalf("buffer: took %+v, %v for %q/%q", got, ok, e.Name, e.Key)
		}
		if buf.Has(e.Name, e.Key) {
			t.Fatalf("buffer: %q/%q still pending after its one signal was taken", e.Name, e.Key)
		}
	})
}

func sameJSON(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// FuzzSchema: input and answer schemas come from flow definitions and input requests, and
// payloads from flowctl --input, input answers and signals. CompileSchema never panics
// (failures are *CompileError) and never reads outside the schema; Validate never panics
// (failures are *SchemaError with messages); validation is consistent: a payload it
// accepts is accepted again, compacted and re-indented.
func FuzzSchema(f *testing.F) {
	schemas := []string{
		``,
		`{"type":"object","properties":{"version":{"type":"string","minLength":1},"n":{"type":"integer","minimum":0}},"required":["version"],"additionalProperties":false}`,
		`{"type":"array","items":{"enum":["a","b"]},"maxItems":3}`,
		`{"$ref":"https://example.com/s.json"}`,
		`{"$defs":{"x":{"type":"number","multipleOf":0.01}},"$ref":"#/$defs/x"}`,
		`{"type":"string","format":"email"}`,
		`{"type":"string","pattern":"^[a-z]+$"}`,
		`{"type":"bogus"}`,
		`not json`,
	}
	payloads := []string{`{"version":"1.2"}`, `{}`, `["a","c"]`, `1.005`, `"a@b.c"`, `null`, ``, `{"version":"x","n":1e400}`, `{`, `"\ud800"`}
	for i, s := range schemas {
		f.Add([]byte(s), []byte(payloads[i%len(payloads)]))
	}
	f.Fuzz(func(t *testing.T, schema, payload []byte) {
		if bytes.Count(schema, []byte("e")) > 20 || bytes.Count(payload, []byte("e")) > 20 {
			return // many huge exponents: exact arithmetic makes each input slow, not wrong
		}
		s, err := CompileSchema(schema)
		if err != nil {
			var ce *CompileError
			if !errors.As(err, &ce) || len(ce.Errors) == 0 || err.Error() == "" {
				t.Fatalf("schema %s: %T %v", schema, err, err)
			}
			return
		}
		err = s.Validate(payload)
		if err != nil {
			var se *SchemaError
			if !errors.As(err, &se) || len(se.Errors) == 0 || err.Error() == "" {
				t.Fatalf("payload %s against %s: %T %v", payload, schema, err, err)
			}
			return
		}
		if len(bytes.TrimSpace(payload)) == 0 {
			return
		}
		var compact, indented bytes.Buffer
		if err := json.Compact(&compact, payload); err != nil {
			t.Fatalf("Validate accepted %q, which is not JSON: %v", payload, err)
		}
		if err := json.Indent(&indented, payload, "", "  "); err != nil {
			t.Fatal(err)
		}
		for _, p := range [][]byte{compact.Bytes(), indented.Bytes()} {
			if err := s.Validate(p); err != nil {
				t.Fatalf("schema %s accepts %s but refuses %s: %v", schema, payload, p, err)
			}
		}
	})
}

// FuzzInputAnswer: answers to human input steps (flowctl input --data) are checked by the
// request: every refusal is an *AnswerError whose code says why, an answer too large is
// CodeTooLarge, and an accepted answer is valid JSON matching the schema.
func FuzzInputAnswer(f *testing.F) {
	req := InputRequest{
		Prompt:         "release notes?",
		Schema:         json.RawMessage(`{"type":"object","properties":{"notes":{"type":"string","maxLength":50}},"required":["notes"]}`),
		Assignees:      []string{"alice", "group:writers"},
		MaxAnswerBytes: 256,
	}
	if err := req.Validate(); err != nil {
		f.Fatal(err)
	}
	isMember := func(group, user string) bool { return group == "writers" && user == "bob" }
	for _, s := range [][2]string{{"alice", `{"notes":"ok"}`}, {"bob", `{"notes":1}`}, {"mallory", `{"notes":"x"}`}, {"", `{}`}, {"alice", `{"notes":"` + strings.Repeat("x", 300) + `"}`}, {"alice", `nul`}} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, by string, payload []byte) {
		err := req.Check(by, payload, isMember)
		if err != nil {
			var ae *AnswerError
			if !errors.As(err, &ae) || ae.Code == "" || err.Error() == "" {
				t.Fatalf("answer %q by %q: %T %v", payload, by, err, err)
			}
			if ae.Code == CodeTooLarge && len(payload) <= req.AnswerLimit() {
				t.Fatalf("answer of %d bytes refused as too large (limit %d)", len(payload), req.AnswerLimit())
			}
			return
		}
		if len(payload) > req.AnswerLimit() {
			t.Fatalf("answer of %d bytes accepted (limit %d)", len(payload), req.AnswerLimit())
		}
		if !req.allowed(by, isMember) {
			t.Fatalf("answer by %q accepted", by)
		}
		if err := MustCompileSchema(req.Schema).Validate(payload); err != nil {
			t.Fatalf("accepted answer %q does not match: %v", payload, err)
		}
	})
}

// FuzzMailboxID: mailbox workflow IDs are made from a signal's name and key (outside
// input). For valid names the ID is printable ASCII, at most 1000 bytes, and distinct
// (name, key) pairs give distinct IDs.
func FuzzMailboxID(f *testing.F) {
	for _, s := range [][3]string{{"order", "o-1", "o-2"}, {"order", "a/b", "a%2Fb"}, {"order", "ключ", "\x01"}, {"order", strings.Repeat("k", 700), strings.Repeat("k", 701)}, {"a", "b/c", "c"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, name, key1, key2 string) {
		if ValidateName(name) != nil || strings.Contains(name, "%") {
			return
		}
		id1, id2 := MailboxID(name, key1), MailboxID(name, key2)
		for _, id := range []string{id1, id2} {
			if len(id) > 1000 {
				t.Fatalf("mailbox ID of %d bytes", len(id))
			}
			for i := 0; i < len(id); i++ {
				if id[i] < '!' || id[i] > '~' {
					t.Fatalf("mailbox ID %q is not printable ASCII", id)
				}
			}
		}
		if (key1 == key2) != (id1 == id2) {
			t.Fatalf("keys %q and %q: IDs %q and %q", key1, key2, id1, id2)
		}
	})
}
