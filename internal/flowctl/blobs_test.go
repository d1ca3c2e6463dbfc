package flowctl

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBadBlobURLIsAUsageError(t *testing.T) {
	code, _, stderr := run(t, "", "--address", closedAddress(t), "--blob-url", "ftp://host/x", "list")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--blob-url")
	assert.Contains(t, stderr, `unsupported scheme "ftp"`)
}
