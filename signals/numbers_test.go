package signals

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateRefusesNumbersItCannotCheck: a number beyond what the validator can parse
// (1e-9999999 against a minimum) used to panic in Validate, on input a person typed; and
// a million-digit number cost a second and a megabyte of message. Both are refused.
func TestValidateRefusesNumbersItCannotCheck(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","minimum":0,"maximum":10}}}`))
	require.NoError(t, err)
	for _, payload := range []string{`{"n":1e-9999999}`, `{"n":1e9999999}`, `{"n":` + strings.Repeat("9", 5000) + `}`} {
		var err error
		assert.NotPanics(t, func() { err = s.Validate(json.RawMessage(payload)) }, payload[:12])
		require.Error(t, err, payload[:12])
		assert.Contains(t, err.Error(), "at /n: number too large to check")
		assert.Less(t, len(err.Error()), 300)
	}
	assert.NoError(t, s.Validate(json.RawMessage(`{"n":1.5e0}`)))
}
