package flow

import (
	"context"

	"github.com/gateflow/gateflow/activities"

	"github.com/gateflow/gateflow/internal/protocol"
)

// RegisterFallbackAction registers fn as the action of every `uses:` name of a
// declarative definition (package flowdef) that no activity of the worker is registered
// under: such a step runs the activity "gateflow.action" with an ActionCall naming
// the action, and its output is what fn returns. With a fallback, flowdef.Validate
// accepts any action name (Worker.Registry reports it, and so does the catalog for
// clients). Register it before loading definitions (package flowdef/serve reads the
// worker's registry when it loads them) and before Start.
func (w *Worker) RegisterFallbackAction(fn func(ctx context.Context, call activities.ActionCall) (any, error)) {
	w.RegisterActivity(fn, protocol.FallbackActionActivity)
}
