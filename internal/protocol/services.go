package protocol

import (
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// ErrorServiceUnavailable is the application error type of a step failed fast while its
// service's circuit breaker is open (flow.ErrorServiceUnavailable); its detail is a
// ServiceWait.
const ErrorServiceUnavailable = "gateflow.ServiceUnavailable"

// ServiceWait is the detail of an ErrorServiceUnavailable error.
type ServiceWait struct {
	Service      string `json:"service"`
	State        string `json:"state"`
	RetryAfterMS int64  `json:"retry_after_ms"`
}

// ServiceEntry is a service's state as one worker reported it, as the services entity
// (ServicesID) keeps it: one entry per service and worker, keyed by Name
// ("service@worker").
type ServiceEntry struct {
	Name string `json:"name"`
	core.ServiceStatus
}

// MarkWaitingService marks the running steps of st whose activity waits for its next
// attempt after failing fast on an open breaker: status StepWaitingService, and the
// Error names the service and when the next attempt is due.
func MarkWaitingService(st *runs.State, pending []*workflowpb.PendingActivityInfo) {
	if st == nil {
		return
	}
	for _, a := range pending {
		f := a.GetLastFailure()
		info := f.GetApplicationFailureInfo()
		if info.GetType() != ErrorServiceUnavailable || a.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
			continue
		}
		var sw ServiceWait
		if err := converter.GetDefaultDataConverter().FromPayloads(info.GetDetails(), &sw); err != nil || sw.Service == "" {
			sw.Service = "?"
		}
		for i := range st.Steps {
			s := &st.Steps[i]
			if s.Status != runs.StepRunning || (s.ActivityID != a.GetActivityId() && !strings.HasPrefix(a.GetActivityId(), s.ActivityID+"@")) {
				continue
			}
			s.Status = runs.StepWaitingService
			s.Error = fmt.Sprintf("waiting for service %s (circuit breaker %s)", sw.Service, sw.State)
			if t := a.GetNextAttemptScheduleTime(); t != nil {
				s.Error += ", next attempt at " + t.AsTime().UTC().Format(time.RFC3339)
			}
		}
	}
}

// CheckAnswerSize is the client's check of an answer before it is sent: no input request
// accepts more than signals.MaxAnswerBytesLimit (the run checks the request's own limit).
func CheckAnswerSize(data []byte) error {
	if n := len(data); n > signals.MaxAnswerBytesLimit {
		return fmt.Errorf("the answer is %d bytes of JSON; the limit is %d (signals.MaxAnswerBytesLimit; a request may set a lower max_answer_bytes)", n, signals.MaxAnswerBytesLimit)
	}
	return nil
}
