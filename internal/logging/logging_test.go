package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
)

func TestJSONLogsAreStructuredAndLevelled(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, "info", "json")
	l.Debug("hidden")
	l.Info("step started", "step", "build", "attempt", 1)
	log.With(l, "run", "r-1").Warn("slow")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2, b.String())
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	assert.Equal(t, "step started", first["msg"])
	assert.Equal(t, "build", first["step"])
	assert.Equal(t, "info", first["level"])
	assert.Contains(t, lines[1], `"run":"r-1"`)
}

func TestOffWritesNothing(t *testing.T) {
	var b bytes.Buffer
	NewSDKLogger(&b, "off").Error("nothing")
	assert.Empty(t, b.String())
	NewSDKLogger(&b, "warn").Info("below the level")
	assert.Empty(t, b.String())
}
