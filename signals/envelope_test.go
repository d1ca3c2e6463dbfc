package signals

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEnvelopeValidate(t *testing.T) {
	ok := Envelope{Name: "deploy-done", Key: "v1.2.3", ID: "sig-1", Payload: json.RawMessage(`{"ok":true}`), Sender: "alice"}
	with := func(f func(*Envelope)) Envelope { e := ok; f(&e); return e }
	tests := []struct {
		name  string
		env   Envelope
		field string // "" means valid
	}{
		{name: "valid", env: ok},
		{name: "empty key and id and payload", env: with(func(e *Envelope) { e.Key, e.ID, e.Payload = "", "", nil })},
		{name: "name with dots and slashes", env: with(func(e *Envelope) { e.Name = "ci.pipeline/finished_v2" })},
		{name: "unicode key of 200", env: with(func(e *Envelope) { e.Key = strings.Repeat("é", 200) })},
		{name: "null payload", env: with(func(e *Envelope) { e.Payload = json.RawMessage("null") })},
		{name: "name required", env: with(func(e *Envelope) { e.Name = "" }), field: "name"},
		{name: "name starts with dash", env: with(func(e *Envelope) { e.Name = "-x" }), field: "name"},
		{name: "name with space", env: with(func(e *Envelope) { e.Name = "a b" }), field: "name"},
		{name: "name too long", env: with(func(e *Envelope) { e.Name = strings.Repeat("a", 201) }), field: "name"},
		{name: "key too long", env: with(func(e *Envelope) { e.Key = strings.Repeat("k", 201) }), field: "key"},
		{name: "key not UTF-8", env: with(func(e *Envelope) { e.Key = "\xff" }), field: "key"},
		{name: "id too long", env: with(func(e *Envelope) { e.ID = strings.Repeat("i", 201) }), field: "id"},
		{name: "payload not JSON", env: with(func(e *Envelope) { e.Payload = json.RawMessage(`{"a":`) }), field: "payload"},
		{name: "payload too big", env: with(func(e *Envelope) {
			e.Payload = json.RawMessage(`"` + strings.Repeat("x", MaxPayloadBytes) + `"`)
		}), field: "payload"},
		{name: "sender required", env: with(func(e *Envelope) { e.Sender = "" }), field: "sender"},
		{name: "sender blank", env: with(func(e *Envelope) { e.Sender = "  " }), field: "sender"},
		{name: "sender too long", env: with(func(e *Envelope) { e.Sender = strings.Repeat("s", 201) }), field: "sender"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.env.Validate()
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "envelope", fe.Type)
			assert.Equal(t, tt.field, fe.Field)
			assert.Contains(t, err.Error(), "signals: envelope "+tt.field+": ")
		})
	}
}

func TestEnvelopeJSON(t *testing.T) {
	e := Envelope{Name: "deploy-done", Key: "v1", ID: "x", Payload: json.RawMessage(`{"a":1}`), Sender: "alice",
		SentAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"deploy-done","key":"v1","id":"x","payload":{"a":1},"sender":"alice","sent_at":"2025-01-02T03:04:05Z"}`, string(b))
	var back Envelope
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, e, back)

	b, err = json.Marshal(Envelope{Name: "n", ID: "x", Sender: "s"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"n","id":"x","sender":"s"}`, string(b))
	assert.Equal(t, json.RawMessage("null"), Envelope{}.PayloadOrNull())
	assert.Equal(t, json.RawMessage("1"), Envelope{Payload: json.RawMessage("1")}.PayloadOrNull())
}

func TestNewID(t *testing.T) {
	id := NewID("run-1", "deploy-done", "v1", 1)
	assert.Equal(t, id, NewID("run-1", "deploy-done", "v1", 1), "deterministic")
	assert.Regexp(t, `^sig-[0-9a-f]{32}$`, id)
	others := []string{
		NewID("run-2", "deploy-done", "v1", 1),
		NewID("run-1", "deploy-done", "v1", 2),
		NewID("run-1", "deploy-done", "v2", 1),
		NewID("run-1", "deploy-donev", "1", 1), // parts are length-prefixed, so no run-together
		NewID("", "", "", 0),
	}
	seen := map[string]bool{id: true}
	for _, o := range others {
		assert.False(t, seen[o], o)
		seen[o] = true
	}
	require.NoError(t, Envelope{Name: "n", ID: id, Sender: "s"}.Validate())
}
