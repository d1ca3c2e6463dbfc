package flow

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/searchattr"
)

// MemoState is the Memo key under which a run keeps its final RunState, so closed runs can
// be inspected without a worker.
const MemoState = "gateflow.state"

// runHandler is gateflow's run wrapper around a handler.
func runHandler[I, O any](wctx workflow.Context, info WorkflowInfo, handler Handler[I, O], in I) (O, error) {
	st := &RunState{
		Workflow:  info.Name,
		Version:   info.Version,
		Status:    StatusRunning,
		StartedAt: workflow.GetInfo(wctx).WorkflowStartTime,
		Steps:     []StepRecord{},
	}
	c := &Context{wctx: wctx, state: st}
	var zero O
	if err := workflow.SetQueryHandlerWithOptions(wctx, QueryState, func() (RunState, error) {
		return st.clone(), nil
	}, workflow.QueryHandlerOptions{Description: "The run's status and step records"}); err != nil {
		return zero, fmt.Errorf("register query %s: %w", QueryState, err)
	}
	c.setStatus(StatusRunning)
	c.publishDetails()

	out, err := handler(c, in)

	status := StatusCompleted
	msg := ""
	if err != nil {
		status = StatusFailed
		msg = err.Error()
	}
	st.finish(workflow.Now(wctx), status, msg)
	c.setStatus(status)
	c.publishDetails()
	if merr := workflow.UpsertMemo(wctx, map[string]any{MemoState: st.clone()}); merr != nil {
		c.Logger().Warn("keep final state in memo", "error", merr)
	}
	return out, err
}

// setStatus records the run status and upserts FlowStatus when it changed.
func (c *Context) setStatus(s Status) {
	c.state.Status = s
	cur, _ := workflow.GetTypedSearchAttributes(c.wctx).GetKeyword(searchattr.StatusKey)
	if cur == string(s) {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(c.wctx, searchattr.StatusKey.ValueSet(string(s))); err != nil {
		c.Logger().Warn("upsert FlowStatus", "status", s, "error", err)
	}
}

// publishDetails writes the run's current details (markdown) for the Web UI.
func (c *Context) publishDetails() {
	workflow.SetCurrentDetails(c.wctx, detailsMarkdown(c.state, workflow.Now(c.wctx)))
}

// runStep runs one step as an activity and keeps its record. validateErr, when set, fails
// the step without dispatching anything. result receives the activity's result; done
// reports the record's output preview, attempt and exit code from it.
func (c *Context) runStep(name string, kind StepKind, validateErr error, activity string, arg any,
	o stepOptions, nonRetryable []string, result any, done func() (string, int, *int)) error {
	now := workflow.Now(c.wctx)
	i := c.state.beginStep(name, kind, now)
	rec := c.state.Steps[i]
	if validateErr == nil && strings.TrimSpace(name) == "" {
		validateErr = errors.New("step name is empty")
	}
	if validateErr != nil {
		c.state.endStep(i, now, StepFailed, 0, validateErr.Error(), "", nil)
		c.publishDetails()
		return &StepError{Step: name, Kind: kind, Err: validateErr}
	}
	c.publishDetails()

	actx := workflow.WithActivityOptions(c.wctx, activityOptions(rec.ActivityID, name, kind, o, nonRetryable))
	err := workflow.ExecuteActivity(actx, activity, arg).Get(actx, result)
	end := workflow.Now(c.wctx)
	if err != nil {
		attempt, code := failureDetails(err)
		c.state.endStep(i, end, StepFailed, attempt, errorMessage(err), "", code)
		c.publishDetails()
		return &StepError{Step: name, Kind: kind, Err: err}
	}
	output, attempt, code := done()
	c.state.endStep(i, end, StepCompleted, attempt, "", output, code)
	c.publishDetails()
	return nil
}

func activityOptions(id, name string, kind StepKind, o stepOptions, nonRetryable []string) workflow.ActivityOptions {
	timeout := o.timeout
	if timeout <= 0 {
		timeout = DefaultStepTimeout
	}
	hb := o.heartbeatTimeout
	if hb <= 0 {
		hb = DefaultHeartbeatTimeout
	}
	retry := o.retry
	if retry == nil {
		retry = &temporal.RetryPolicy{MaximumAttempts: DefaultStepAttempts, NonRetryableErrorTypes: nonRetryable}
	}
	return workflow.ActivityOptions{
		ActivityID:          id,
		Summary:             fmt.Sprintf("%s (%s)", name, kind),
		StartToCloseTimeout: timeout + 30*time.Second, // the activity enforces timeout itself and reports it
		HeartbeatTimeout:    hb,
		RetryPolicy:         retry,
	}
}

// StepError is the error a step returns to its handler: which step failed and why. Err is
// the Temporal error (an *temporal.ActivityError wrapping the cause), so errors.As works
// on it.
type StepError struct {
	Step string
	Kind StepKind
	Err  error
}

func (e *StepError) Error() string { return fmt.Sprintf("step %s: %s", e.Step, errorMessage(e.Err)) }

// Unwrap returns the underlying Temporal error.
func (e *StepError) Unwrap() error { return e.Err }

// errorMessage is the most useful line of a Temporal error: the application error's
// message, or the timeout or cancellation, without the activity wrapper's prefix.
func errorMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var to *temporal.TimeoutError
	if errors.As(err, &to) {
		return "timed out (" + strings.ToLower(strings.TrimPrefix(to.TimeoutType().String(), "TIMEOUT_TYPE_")) + ")"
	}
	var ce *temporal.CanceledError
	if errors.As(err, &ce) {
		return "cancelled"
	}
	return err.Error()
}

// failureDetails extracts the attempt and exit code a built-in step attached to its error.
func failureDetails(err error) (int, *int) {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || !app.HasDetails() {
		return 0, nil
	}
	var f activities.ShellFailure
	if app.Details(&f) != nil {
		return 0, nil
	}
	if app.Type() != activities.ShellExitErrorType {
		return f.Attempt, nil
	}
	code := f.ExitCode
	return f.Attempt, &code
}

func (s *RunState) clone() RunState {
	c := *s
	c.Steps = append([]StepRecord(nil), s.Steps...)
	return c
}
