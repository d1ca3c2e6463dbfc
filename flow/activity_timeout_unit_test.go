package flow

import (
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
)

// A step's timeout is its activity's StartToCloseTimeout, with a slack only for the steps
// that enforce their timeout themselves (shell, http): an agent step has no timeout of its
// own, so its StepTimeout must be Temporal's.
func TestActivityOptionsTimeoutSlackOnlyForShellAndHTTP(t *testing.T) {
	o := stepOptions{timeout: 2 * time.Second}
	for kind, want := range map[runs.StepKind]time.Duration{
		runs.KindShell: 32 * time.Second, runs.KindHTTP: 32 * time.Second,
		runs.KindAgent: 2 * time.Second, runs.KindDecision: 2 * time.Second, runs.KindActivity: 2 * time.Second,
	} {
		assert.Equal(t, want, activityOptions("id", "step", kind, o, nil).StartToCloseTimeout, kind)
	}
}
