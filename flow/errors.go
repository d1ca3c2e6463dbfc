package flow

import (
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// StepError is the error a step returns to its handler: which step failed and why. Err is
// the cause: a Temporal error (an *temporal.ActivityError wrapping an application error,
// a timeout or a cancellation), a *GuardError, or the validation error of a step that was
// never dispatched. errors.As and errors.Is work through it.
type StepError struct {
	Step string
	Kind runs.StepKind
	Err  error
}

// errorMessage is the most useful line of an error: an application error's message, or the
// timeout or cancellation, without the activity wrapper's prefix.
func errorMessage(err error) string {
	var se *StepError
	if errors.As(err, &se) && se != err {
		return se.Error()
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var to *temporal.TimeoutError
	if errors.As(err, &to) {
		return "timed out (" + timeoutName(to.TimeoutType()) + ")" // run_routing.go: start_to_close, ...
	}
	if isCancellation(err) {
		return "cancelled"
	}
	return err.Error()
}

func isCancellation(err error) bool {
	var ce *temporal.CanceledError
	return errors.As(err, &ce) || errors.Is(err, workflow.ErrCanceled)
}

// versionError is the failure of a run picked up by a worker whose flow has another
// version than the run was started with.
type versionError struct {
	Workflow, Started, Worker string
}

// Error implements error.
func (e *versionError) Error() string {
	return fmt.Sprintf("version: run of %s was started with version %q, this worker has version %q; "+
		"run it on a worker with version %q (or keep versions compatible with workflow.GetVersion)",
		e.Workflow, e.Started, e.Worker, e.Started)
}

type permanentError struct{ err error }

// Error implements error.
func (e *permanentError) Error() string { return e.err.Error() }

func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks a handler's error as final: the run fails without further run attempts
// (see MaxAttempts).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// Error implements error.
func (e *StepError) Error() string { return fmt.Sprintf("step %s: %s", e.Step, errorMessage(e.Err)) }

// Unwrap returns the cause.
func (e *StepError) Unwrap() error { return e.Err }

// errGuard makes errors.Is match every *GuardError (callers use errors.As).
var (
	// errGuard is matched by every guard refusal (a *GuardError).
	errGuard = errors.New("guard limit reached")
)

// isBudgetExceeded reports a budget refusal or crossing, here or in a child run.
func isBudgetExceeded(err error) bool {
	return errors.Is(err, budget.ErrExceeded) || errors.Is(err, budget.ErrQuotaExhausted) ||
		ErrorBudgetExceeded.Is(err) || ErrorQuotaExhausted.Is(err)
}

// ErrorType is the type of a Temporal application error that gateflow fails a run or a
// step with. Callers (a parent run, a Go client, a tool reading history) branch on it with
// Is (or temporal.ApplicationError.Type); the values are stable.
type ErrorType string

// Application error types.
const (
	// ErrorBudgetExceeded ends a run whose money cap was reached (status budget_exceeded).
	ErrorBudgetExceeded ErrorType = protocol.ErrorBudgetExceeded
	// ErrorRejected ends a run whose approval was rejected (status rejected).
	ErrorRejected ErrorType = protocol.ErrorRejected
	// ErrorQuotaExhausted refuses a run whose monthly quota is used up.
	ErrorQuotaExhausted ErrorType = protocol.ErrorQuotaExhausted
	// ErrorVersionMismatch fails a run picked up by a worker with another flow version.
	ErrorVersionMismatch ErrorType = protocol.ErrorVersionMismatch
	// ErrorInvalidStep fails a step that can never run as written (not retried).
	ErrorInvalidStep ErrorType = activities.InvalidStepErrorType
	// ErrorShellExit, ErrorShellStart and ErrorShellTimeout fail shell steps: a non-zero
	// exit, a command that could not start, a command killed at its timeout.
	ErrorShellExit    ErrorType = activities.ShellExitErrorType
	ErrorShellStart   ErrorType = activities.ShellStartErrorType
	ErrorShellTimeout ErrorType = activities.ShellTimeoutErrorType
	// ErrorHTTPStatus and ErrorHTTPTransport fail HTTP steps: an unexpected status, or no
	// answer at all.
	ErrorHTTPStatus    ErrorType = activities.HTTPStatusErrorType
	ErrorHTTPTransport ErrorType = activities.HTTPTransportErrorType
	// ErrorAgentBudget, ErrorAgentBadJSON, ErrorAgentSchema, ErrorAgentRateLimited,
	// ErrorAgentAPI, ErrorAgentUnpriced and ErrorAgentFailed fail agent steps (see package
	// activities).
	ErrorAgentBudget      ErrorType = activities.AgentBudgetErrorType
	ErrorAgentBadJSON     ErrorType = activities.AgentBadJSONErrorType
	ErrorAgentSchema      ErrorType = activities.AgentSchemaErrorType
	ErrorAgentRateLimited ErrorType = activities.AgentRateLimitedErrorType
	ErrorAgentAPI         ErrorType = activities.AgentAPIErrorType
	ErrorAgentUnpriced    ErrorType = activities.AgentUnpricedErrorType
	ErrorAgentFailed      ErrorType = activities.AgentFailedErrorType
	// ErrorGoto fails a run whose handler returned a *GotoError: a label that gave up
	// after MaxVisits, or a Goto no enclosing label caught (see Context.Label).
	ErrorGoto ErrorType = "GotoError"
	// ErrorServiceUnavailable fails a step fast while its service's circuit breaker is
	// open; retryable, its next retry waits out the open time (see package service).
	ErrorServiceUnavailable ErrorType = protocol.ErrorServiceUnavailable
	// ErrorNoCacheStore fails a step with Cache on a worker without a blob store
	// (WorkerOptions.BlobURL); not retried.
	ErrorNoCacheStore ErrorType = "gateflow.NoCacheStore"
	// ErrorArtifactsUnavailable fails a shell step that declares artifacts on a worker
	// without a blob store (WorkerOptions.BlobURL); not retried.
	ErrorArtifactsUnavailable ErrorType = activities.ArtifactsUnavailableErrorType
	// ErrorArtifactNotFound fails a shell step whose input no earlier step of the run
	// attempt produced, before it is dispatched (the error names the step and artifact).
	ErrorArtifactNotFound ErrorType = activities.ArtifactNotFoundErrorType
	// ErrorArtifact fails a shell step whose outputs cannot be collected (a pattern that
	// matched no file); not retried.
	ErrorArtifact ErrorType = activities.ArtifactErrorType
	// ErrorQualityGate is the type of a quality gate whose score is below its threshold
	// (with quality.Fail). It is not retried by Temporal; the run's own attempts
	// (MaxAttempts) may run the handler again.
	ErrorQualityGate ErrorType = "gateflow.QualityGate"
)

// Is reports whether err's chain holds an application error of type t.
func (t ErrorType) Is(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == string(t)
}

// newTypedError is a non-retryable application error of type t.
func newTypedError(msg string, t ErrorType, cause error) error {
	return temporal.NewNonRetryableApplicationError(msg, string(t), cause)
}
