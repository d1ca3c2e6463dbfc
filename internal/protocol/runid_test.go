package protocol

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckRunID(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"ship-1a2b3c4d5e", ""},
		{"test.scheduled/triggered-by/run-1/4f1c", ""},
		{"gateflow-semaphore/deploy@gateflow", ""},
		{"with space", ""},
		{strings.Repeat("a", MaxRunIDLen), ""},
		{"", "run ID is empty"},
		{"   ", `run ID "   " is blank`},
		{"run-🚀", `run ID "run-🚀" has U+1F680 at byte 4: use printable ASCII only (letters, digits, punctuation, spaces)`},
		{"run\x00", `run ID "run\x00" has U+0000 at byte 3`},
		{"run\n1", `run ID "run\n1" has U+000A at byte 3`},
		{"run\x7f", `has U+007F at byte 3`},
		{"caf\u00e9", `has U+00E9 at byte 3`},
		{strings.Repeat("a", MaxRunIDLen+1), "is 1001 bytes long; at most 1000"},
	} {
		err := CheckRunID(c.id)
		if c.want == "" {
			assert.NoError(t, err, "%q", c.id)
			continue
		}
		var ne *NameError
		require.True(t, errors.As(err, &ne), "%q: %v", c.id, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

// FuzzCheckRunID: an accepted ID is exactly what gRPC sends as a header value (the
// temporal-resource-id header Temporal puts a workflow ID in), non-blank and bounded; a
// refused one gets a one-line message naming it.
func FuzzCheckRunID(f *testing.F) {
	for _, s := range []string{"ship-1", "", " ", "a\tb", "run-🚀", "\x00", "x\u2028y", strings.Repeat("z", 1001)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		err := CheckRunID(id)
		headerOK := headerValue(id)
		wantOK := id != "" && len(id) <= MaxRunIDLen && strings.TrimSpace(id) != "" && headerOK
		if (err == nil) != wantOK {
			t.Fatalf("%q: CheckRunID %v, header valid %v", id, err, headerOK)
		}
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "run ID ") || (utf8.ValidString(id) && !utf8.ValidString(msg)) || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("%q: message %q", id, msg)
			}
		}
	})
}

// headerValue is grpc-go's rule for a header value (internal/metadata.ValidatePair): every
// byte in [0x20, 0x7e].
func headerValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}
