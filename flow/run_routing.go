package flow

import (
	"errors"

	"github.com/gateflow/gateflow/activities"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// route applies a failed step's error routing (OnFailure, OnTimeout) and returns what the
// handler sees. Without routing it returns err unchanged.
func (c *Context) route(p *pending, result any, describe func() outcome, err error) error {
	return err
}

// failureStatus is the status of a step that ended with err, and for a timeout which
// timeout ended it: a Temporal timeout of the activity, or a built-in step's own timeout
// (a shell command killed at its Timeout counts as start_to_close).
func failureStatus(err error) (StepStatus, string) {
	if isCancellation(err) {
		return StepCancelled, ""
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return StepTimedOut, timeoutName(te.TimeoutType())
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.Type() == activities.ShellTimeoutErrorType {
		return StepTimedOut, "start_to_close"
	}
	return StepFailed, ""
}

func timeoutName(t enumspb.TimeoutType) string {
	switch t {
	case enumspb.TIMEOUT_TYPE_START_TO_CLOSE:
		return "start_to_close"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
		return "schedule_to_start"
	case enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE:
		return "schedule_to_close"
	case enumspb.TIMEOUT_TYPE_HEARTBEAT:
		return "heartbeat"
	}
	return "unspecified"
}
