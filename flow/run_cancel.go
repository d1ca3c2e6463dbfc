package flow

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
)

// maxCancelReason bounds a cancellation's reason, so callers cannot grow the run's state.
const maxCancelReason = 500

// registerCancel installs the Update gateflow.cancel: a cancellation the run can check
// before it happens — its sender's proof against the run's pinned policy, and the policy's
// rule for who may cancel — unlike Temporal's own cancellation request, which names no one.
// An accepted cancellation cancels the handler's context, so the run ends as it does on
// Temporal's request (cancelled; OnError and Always steps run) with who and why kept.
// Registering it adds no command, so runs recorded before it replay unchanged.
func (rt *runner) registerCancel(wctx workflow.Context) error {
	if err := workflow.SetUpdateHandlerWithOptions(wctx, protocol.UpdateCancel,
		func(ctx workflow.Context, r protocol.RunCancel) (runs.Status, error) {
			verified, err := rt.verifyCancel(ctx, r)
			if err != nil {
				return "", err
			}
			rt.control.auth.spend(ctx, verified)
			rt.takeCancelReason(protocol.CancelReason{By: strings.TrimSpace(r.By), Reason: strings.TrimSpace(r.Reason)})
			workflow.GetLogger(ctx).Info("run cancelled", "by", r.By, "reason", r.Reason)
			rt.control.cancelled = true
			if rt.control.cancelHandler != nil {
				rt.control.cancelHandler()
			}
			return rt.state.Status, nil
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ctx workflow.Context, r protocol.RunCancel) error {
				if err := rt.checkCancel(r); err != nil {
					return err
				}
				_, err := rt.verifyCancel(ctx, r)
				return err
			},
			Description: "Cancel the run {\"by\": \"alice\", \"reason\": \"...\"}: its steps in flight are cancelled, " +
				"its OnError and Always steps run, and it ends cancelled. Returns the run's status.",
		}); err != nil {
		return fmt.Errorf("register update %s: %w", protocol.UpdateCancel, err)
	}
	return nil
}

// checkCancel is the Validator's part that needs no proof: it refuses a cancellation that
// would change nothing, with the reason, and changes nothing itself.
func (rt *runner) checkCancel(r protocol.RunCancel) error {
	switch {
	case rt.state.Status.Terminal():
		return fmt.Errorf("cancel: the run has ended (%s)", rt.state.Status)
	case rt.control.cancelled:
		return fmt.Errorf("cancel: the run is being cancelled already (%s)", rt.control.cancelReason)
	case utf8.RuneCountInString(r.Reason) > maxCancelReason:
		return fmt.Errorf("cancel: the reason is longer than %d characters", maxCancelReason)
	}
	return checkDecider("cancel", r.By) // limits.go
}

// verifyCancel checks a cancellation's proof and rule against the run's pinned policy.
func (rt *runner) verifyCancel(ctx workflow.Context, r protocol.RunCancel) (*auth.Verified, error) {
	return rt.control.auth.check(ctx, "cancel by "+strings.TrimSpace(r.By), r.Proof, func(ns, run string) (auth.Decision, error) {
		return decisions.Cancel(ns, run, r)
	})
}
