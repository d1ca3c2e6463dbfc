package signals

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sig(name, key, id string) Envelope {
	return Envelope{Name: name, Key: key, ID: id, Payload: json.RawMessage(`{"id":"` + id + `"}`), Sender: "test"}
}

func ids(es []Envelope) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestBufferKeepsSignalsSentBeforeTheWait(t *testing.T) {
	var b Buffer // the zero value is ready
	require.True(t, b.Add(sig("deploy-done", "v1", "a")))
	assert.True(t, b.Has("deploy-done", "v1"))

	e, ok := b.Take("deploy-done", "v1")
	require.True(t, ok)
	assert.Equal(t, "a", e.ID)
	_, ok = b.Take("deploy-done", "v1")
	assert.False(t, ok, "taken once")
	assert.True(t, b.Seen("a"))
	assert.False(t, b.Add(sig("deploy-done", "v1", "a")), "a repeat after delivery is not delivered again")
	assert.Equal(t, 0, b.Len())
}

func TestBufferDedupesByID(t *testing.T) {
	var b Buffer
	assert.True(t, b.Add(sig("n", "k", "x")))
	assert.False(t, b.Add(sig("n", "k", "x")))
	assert.False(t, b.Add(sig("other", "k2", "x")), "ids are global to the run")
	assert.Equal(t, []string{"x"}, ids(b.Pending()))
	assert.False(t, b.Seen("y"))
	assert.False(t, b.Seen(""))

	// Without an id nothing can be deduplicated: both are kept.
	assert.True(t, b.Add(sig("n", "k", "")))
	assert.True(t, b.Add(sig("n", "k", "")))
	assert.Equal(t, 3, b.Len())
}

func TestBufferTakeMatching(t *testing.T) {
	var b Buffer
	for _, e := range []Envelope{sig("a", "", "1"), sig("a", "k", "2"), sig("b", "k", "3"), sig("a", "k", "4"), sig("a", "K", "5")} {
		require.True(t, b.Add(e))
	}
	tests := []struct {
		name, key string
		want      string // "" means none
	}{
		{"a", "k", "2"},
		{"a", "k", "4"}, // oldest first, each once
		{"a", "k", ""},
		{"a", "", "1"}, // empty key matches the empty key only
		{"a", "", ""},
		{"a", "K", "5"}, // keys are case-sensitive
		{"b", "", ""},
		{"b", "k", "3"},
	}
	for i, tt := range tests {
		e, ok := b.Take(tt.name, tt.key)
		if tt.want == "" {
			assert.False(t, ok, "step %d", i)
			continue
		}
		require.True(t, ok, "step %d", i)
		assert.Equal(t, tt.want, e.ID, "step %d", i)
	}
	assert.Equal(t, 0, b.Len())
}

func TestBufferTakeValidRecordsRejections(t *testing.T) {
	schema := MustCompileSchema(json.RawMessage(`{"type":"object","required":["ok"]}`))
	check := func(e Envelope) error { return schema.Validate(e.Payload) }
	var b Buffer
	b.Add(Envelope{Name: "n", ID: "bad", Payload: json.RawMessage(`{}`), Sender: "s"})
	b.Add(Envelope{Name: "other", ID: "o", Payload: json.RawMessage(`{}`), Sender: "s"})
	b.Add(Envelope{Name: "n", ID: "good", Payload: json.RawMessage(`{"ok":1}`), Sender: "s"})

	e, rejected, ok := b.TakeValid("n", "", check)
	require.True(t, ok)
	assert.Equal(t, "good", e.ID)
	require.Len(t, rejected, 1)
	assert.Equal(t, "bad", rejected[0].Envelope.ID)
	assert.Contains(t, rejected[0].Error, `missing property "ok"`)
	assert.Equal(t, []string{"o"}, ids(b.Pending()))

	// Only bad ones: all recorded, nothing delivered, the wait goes on.
	b.Add(Envelope{Name: "n", ID: "bad2", Payload: json.RawMessage(`1`), Sender: "s"})
	_, rejected, ok = b.TakeValid("n", "", check)
	assert.False(t, ok)
	assert.Len(t, rejected, 1)
	assert.False(t, b.Add(Envelope{Name: "n", ID: "bad2", Payload: json.RawMessage(`{"ok":1}`), Sender: "s"}),
		"a rejected id stays seen")

	b.Add(sig("m", "", "m1"))
	e, rejected, ok = b.TakeValid("m", "", nil)
	assert.True(t, ok)
	assert.Equal(t, "m1", e.ID)
	assert.Empty(t, rejected)
	_, _, ok = b.TakeValid("m", "", func(Envelope) error { return errors.New("never") })
	assert.False(t, ok)
}

func TestBufferBounds(t *testing.T) {
	b := NewBuffer(3, 5)
	assert.Equal(t, 3, b.Limit())
	assert.Equal(t, 5, b.SeenLimit())
	for i := range 5 {
		require.True(t, b.Add(sig("n", "", fmt.Sprint(i))))
	}
	assert.Equal(t, []string{"2", "3", "4"}, ids(b.Pending()), "oldest dropped")
	assert.Equal(t, 2, b.Dropped())
	assert.False(t, b.Add(sig("n", "", "0")), "a dropped signal's id stays seen")

	// Take them all, then push more ids than SeenLimit: the oldest are forgotten.
	for b.Len() > 0 {
		b.Take("n", "")
	}
	for i := 5; i < 10; i++ {
		b.Add(sig("other", "", fmt.Sprint(i)))
	}
	assert.False(t, b.Seen("0"))
	assert.True(t, b.Seen("9"))
	assert.True(t, b.Add(sig("n", "", "0")), "forgotten after SeenLimit newer ids")

	// Ids of pending signals are never forgotten, however many ids pass.
	c := NewBuffer(2, 2)
	c.Add(sig("keep", "", "p"))
	for i := range 10 {
		c.Add(sig("n", "", fmt.Sprint(i)))
		c.Take("n", "")
	}
	assert.Equal(t, []string{"p"}, ids(c.Pending()))
	assert.True(t, c.Seen("p"))
	assert.False(t, c.Add(sig("keep", "", "p")))

	d := NewBuffer(0, 1)
	assert.Equal(t, DefaultBufferLimit, d.Limit())
	assert.Equal(t, DefaultBufferLimit, d.SeenLimit(), "raised to Limit")
	var z Buffer
	assert.Equal(t, DefaultSeenLimit, z.SeenLimit())
}

func TestBufferJSONRoundTrip(t *testing.T) {
	b := NewBuffer(2, 10)
	b.Add(sig("n", "k", "a"))
	b.Add(sig("n", "k", "b"))
	b.Add(sig("n", "k", "c")) // drops a
	_, ok := b.Take("n", "k") // takes b
	require.True(t, ok)

	data, err := json.Marshal(b)
	require.NoError(t, err)
	var back Buffer
	require.NoError(t, json.Unmarshal(data, &back))

	assert.Equal(t, []string{"c"}, ids(back.Pending()))
	assert.Equal(t, 1, back.Dropped())
	assert.Equal(t, 2, back.Limit())
	assert.Equal(t, 10, back.SeenLimit())
	for _, id := range []string{"a", "b", "c"} {
		assert.True(t, back.Seen(id), id)
		assert.False(t, back.Add(sig("n", "k", id)), "dedupe state survives: %s", id)
	}
	again, err := json.Marshal(&back)
	require.NoError(t, err)
	assert.JSONEq(t, string(data), string(again))

	// A zero buffer serialises to empty lists, and within a struct by value.
	data, err = json.Marshal(struct{ B Buffer }{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"B":{"pending":[],"seen":[]}}`, string(data))
	var byValue struct{ B Buffer }
	byValue.B.Add(sig("n", "", "v"))
	data, err = json.Marshal(byValue)
	require.NoError(t, err)
	byValue.B = Buffer{}
	require.NoError(t, json.Unmarshal(data, &byValue))
	assert.True(t, byValue.B.Seen("v"))

	for _, bad := range []string{`{"seen":["x","x"]}`, `{"seen":[""]}`, `{"limit":-1}`, `{"dropped":-1}`, `[]`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &back), bad)
	}
	// A pending id missing from the remembered ids is restored.
	require.NoError(t, json.Unmarshal([]byte(`{"pending":[{"name":"n","id":"p","sender":"s"}],"seen":[]}`), &back))
	assert.True(t, back.Seen("p"))
}
