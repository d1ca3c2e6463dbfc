package signals

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnswerLimit(t *testing.T) {
	assert.Equal(t, DefaultMaxAnswerBytes, InputRequest{}.AnswerLimit())
	assert.Equal(t, 1000, InputRequest{MaxAnswerBytes: 1000}.AnswerLimit())

	for _, bad := range []int{-1, MaxAnswerBytesLimit + 1} {
		err := InputRequest{Prompt: "p", MaxAnswerBytes: bad}.Validate()
		var fe *FieldError
		require.ErrorAs(t, err, &fe, "max %d", bad)
		assert.Equal(t, "max_answer_bytes", fe.Field)
	}
	require.NoError(t, InputRequest{Prompt: "p", MaxAnswerBytes: MaxAnswerBytesLimit}.Validate())
}

func TestInputCheckRefusesAnAnswerOverTheLimit(t *testing.T) {
	in, err := NewInput("notes", InputRequest{Prompt: "p", Schema: json.RawMessage(`{"type":"string"}`), MaxAnswerBytes: 100}, time.Unix(0, 0))
	require.NoError(t, err)
	big := json.RawMessage(`"` + strings.Repeat("x", 100) + `"`)
	err = in.Check("carol", big, time.Unix(1, 0), nil)
	var ae *AnswerError
	require.True(t, errors.As(err, &ae))
	assert.Equal(t, CodeTooLarge, ae.Code)
	assert.Equal(t, 102, ae.Size)
	assert.Equal(t, 100, ae.Limit)
	assert.EqualError(t, err, `input "notes": the answer is 102 bytes of JSON; the limit is 100 (max_answer_bytes)`)
	assert.EqualError(t, in.CheckSize(big), err.Error(), "CheckSize alone says the same")
	_, err = in.Accept("carol", big, time.Unix(1, 0), nil)
	require.Error(t, err)
	assert.Nil(t, in.Answer)
	require.NoError(t, in.CheckSize(json.RawMessage(`"small"`)))
	_, err = in.Accept("carol", json.RawMessage(`"small"`), time.Unix(1, 0), nil)
	require.NoError(t, err)
}
