package flowclient

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gateflow/gateflow/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClientRefusesAnAnswerOverTheHardLimitBeforeSending(t *testing.T) {
	c := New(nil, Options{Identity: "carol"})
	_, err := c.Answer(t.Context(), AnswerRequest{Run: "r", Name: "notes", Data: bigNotes(1_500_000)})
	var ie *core.InputError
	require.ErrorAs(t, err, &ie)
	assert.ErrorContains(t, err, "the answer is 1500027 bytes of JSON; the limit is 262144")
}

func bigNotes(n int) json.RawMessage {
	b, _ := json.Marshal(struct {
		Summary string `json:"summary"`
		Risk    string `json:"risk"`
	}{Summary: strings.Repeat("x", n), Risk: "low"})
	return b
}
