package integration

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/flowctl"
)

// TestStartWithoutRequiredFieldsStartsNothing: the derived start schema requires the input
// type's fields that are neither omitempty nor pointers, so `flowctl start ship --input
// '{}'` is refused with the missing field and exit 2, and no run starts (it used to start
// a run that failed at once).
func TestStartWithoutRequiredFieldsStartsNothing(t *testing.T) {
	id := fmt.Sprintf("ship-required-%d", time.Now().UnixNano())
	r := flowctlRun(t, "", "start", "ship", "--input", `{}`, "--id", id)
	assert.Equal(t, flowctl.ExitUsage, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, `missing property "version"`)
	_, err := shared.client.Describe(ctxT(t, time.Minute), id)
	var nf *flow.RunNotFoundError
	require.True(t, errors.As(err, &nf), "nothing started: %v", err)

	r = flowctlRun(t, "", "start", "ship", "--input", `{"Version":"1.0.0"}`, "--id", id)
	assert.Equal(t, flowctl.ExitUsage, r.code, "another spelling does not count: %s", r.stderr)
}
