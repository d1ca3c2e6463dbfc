package flow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A step's timeout is its activity's StartToCloseTimeout, with a slack only for the steps
// that enforce their timeout themselves (shell, http): an agent step has no timeout of its
// own, so its StepTimeout must be Temporal's.
func TestActivityOptionsTimeoutSlackOnlyForShellAndHTTP(t *testing.T) {
	o := stepOptions{timeout: 2 * time.Second}
	for kind, want := range map[StepKind]time.Duration{
		KindShell: 32 * time.Second, KindHTTP: 32 * time.Second,
		KindAgent: 2 * time.Second, KindDecision: 2 * time.Second, KindActivity: 2 * time.Second,
	} {
		assert.Equal(t, want, activityOptions("id", "step", kind, o, nil).StartToCloseTimeout, kind)
	}
}
