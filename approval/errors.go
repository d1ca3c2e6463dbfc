package approval

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrRejected is matched (errors.Is) by every *RejectedError.
var ErrRejected = errors.New("approval rejected")

// ErrChangesRequested is matched (errors.Is) by every *ChangesRequestedError.
var ErrChangesRequested = errors.New("approval changes requested")

// ErrTimedOut is matched (errors.Is) by every *TimedOutError.
var ErrTimedOut = errors.New("approval timed out")

// RejectedError is what ctx.Approval returns when someone rejected the gate. The handler
// may handle it (errors.As) and carry on, or return it and fail the run. Decision says who
// rejected, when and why.
type RejectedError struct {
	// Gate is the gate's name.
	Gate string
	// Decision is the gate's decision (Outcome Rejected).
	Decision Decision
}

// Error reads "approval ship: rejected by alice: not ready" (without ": comment" when the
// rejection has none).
func (e *RejectedError) Error() string {
	return withComment(fmt.Sprintf("approval %s: rejected by %s", e.Gate, e.Decision.By), e.Decision.Comment)
}

// Is makes errors.Is(err, ErrRejected) true.
func (e *RejectedError) Is(target error) bool { return target == ErrRejected }

// ChangesRequestedError is what ctx.Approval returns when someone asked for changes. It
// carries the comment saying what to change, so the handler can loop back to the step that
// produced the work, redo it with the comment, and open the gate again.
type ChangesRequestedError struct {
	// Gate is the gate's name.
	Gate string
	// Decision is the gate's decision (Outcome ChangesRequested); its Comment says what to
	// change and By who asked.
	Decision Decision
}

// Error reads "approval ship: changes requested by bob: bump the version".
func (e *ChangesRequestedError) Error() string {
	return withComment(fmt.Sprintf("approval %s: changes requested by %s", e.Gate, e.Decision.By), e.Decision.Comment)
}

// Comment is what the person asked to change.
func (e *ChangesRequestedError) Comment() string { return e.Decision.Comment }

// Is makes errors.Is(err, ErrChangesRequested) true.
func (e *ChangesRequestedError) Is(target error) bool { return target == ErrChangesRequested }

// TimedOutError is what ctx.Approval returns when the gate's deadline passed without a
// decision and OnTimeout was reject (the handler may handle it) or fail (Decision.FailRun
// is set and the run fails).
type TimedOutError struct {
	// Gate is the gate's name.
	Gate string
	// Deadline is when the gate stopped waiting.
	Deadline time.Time
	// Decision is the gate's decision (Outcome TimedOut); its Votes are the approvals
	// that were not enough.
	Decision Decision
}

// Error reads "approval ship: timed out at 2026-05-02T10:00:00Z without a decision",
// adding " (approved so far by alice)" when some approvals came in, too few, and
// "; the run fails" for FailOnTimeout.
func (e *TimedOutError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "approval %s: timed out at %s without a decision", e.Gate, e.Deadline.UTC().Format(time.RFC3339))
	var approvers []string
	for _, v := range e.Decision.Votes {
		if v.Kind == Approve {
			approvers = append(approvers, v.By)
		}
	}
	if len(approvers) > 0 {
		fmt.Fprintf(&b, " (approved so far by %s)", strings.Join(approvers, ", "))
	}
	if e.Decision.FailRun {
		b.WriteString("; the run fails")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrTimedOut) true.
func (e *TimedOutError) Is(target error) bool { return target == ErrTimedOut }

// Err is the error the handler gets for the gate's decision: nil while the gate is open
// and when it was approved (by people or by its deadline), a *RejectedError, a
// *ChangesRequestedError or a *TimedOutError otherwise.
func (g *Gate) Err() error {
	d := g.Decision
	if d == nil {
		return nil
	}
	switch d.Outcome {
	case Rejected:
		return &RejectedError{Gate: g.Name, Decision: *g.decision()}
	case ChangesRequested:
		return &ChangesRequestedError{Gate: g.Name, Decision: *g.decision()}
	case TimedOut:
		deadline := d.DecidedAt
		if g.Deadline != nil {
			deadline = *g.Deadline
		}
		return &TimedOutError{Gate: g.Name, Deadline: deadline, Decision: *g.decision()}
	}
	return nil
}

// withComment appends ": comment" when there is one.
func withComment(msg, comment string) string {
	if comment == "" {
		return msg
	}
	return msg + ": " + comment
}
