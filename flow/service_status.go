package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The services' state is published, per worker, in a catalog entity of its own (workflow
// ID "gateflow-catalog-<queue>/services", run on the task queue like the flows' catalog): each
// worker sends one entry per declared service when it starts and again whenever one of
// its breakers changes state, keyed by service and worker identity, so the entity holds
// the latest state every worker reported. flowclient.Client.Services reads it from the entity's Memo.

// breakerState is a breaker's state on one worker (the JSON of
// flowclient.ServiceBreakerState).
type breakerState struct {
	// Service is the service's name.
	Service string `json:"service"`
	// State is "closed", "half-open" or "open"; empty when the service has no breaker.
	State string `json:"state,omitempty"`
	// OpenUntil is when an open breaker lets probes through.
	OpenUntil *time.Time `json:"open_until,omitempty"`
	// ConsecutiveFailures, Requests and Failures are the breaker's counts in its current
	// interval (or, while half-open, of the probes).
	ConsecutiveFailures uint32 `json:"consecutive_failures"`
	Requests            uint32 `json:"requests"`
	Failures            uint32 `json:"failures"`
	// UpdatedAt is when the worker reported it.
	UpdatedAt time.Time `json:"updated_at"`
}

// serviceStatus is a declared service as one worker reported it (the JSON of
// flowclient.ServiceStatus).
type serviceStatus struct {
	breakerState
	// Worker is the reporting worker's identity.
	Worker string `json:"worker"`
	// RatePerSecond and MaxConcurrent are the worker's limits of the service.
	RatePerSecond float64 `json:"rate_per_second,omitempty"`
	MaxConcurrent int     `json:"max_concurrent,omitempty"`
}

// serviceEntry is a serviceStatus as the entity keeps it (its key is Name).
type serviceEntry struct {
	Name string `json:"name"`
	serviceStatus
}

// servicesPart publishes the worker's services' state: at Start, and after each change
// of a breaker's state (coalesced, by one goroutine).
type servicesPart struct {
	breakers []*serviceBreaker
	notify   chan struct{}
	stop     context.CancelFunc
	done     chan struct{}
}

// breakerChanged asks for the services' state to be published again.
func (w *Worker) breakerChanged(*serviceBreaker) {
	select {
	case w.svc.notify <- struct{}{}:
	default: // a publish is due already
	}
}

// startServicePublisher publishes the services' state now and starts the goroutine that
// publishes it again after changes.
func (w *Worker) startServicePublisher(ctx context.Context) error {
	if len(w.opts.Services) == 0 {
		return nil
	}
	if err := w.publishServices(ctx); err != nil {
		return fmt.Errorf("publish the services' state: %w", err)
	}
	pctx, cancel := context.WithCancel(context.Background())
	w.svc.stop, w.svc.done = cancel, make(chan struct{})
	go func() {
		defer close(w.svc.done)
		for {
			select {
			case <-pctx.Done():
				return
			case <-w.svc.notify:
			}
			cctx, cancel := context.WithTimeout(pctx, 10*time.Second)
			_ = w.publishServices(cctx) // best effort: the next change publishes again
			cancel()
		}
	}()
	return nil
}

// stopServicePublisher stops the publishing goroutine.
func (w *Worker) stopServicePublisher() {
	if w.svc.stop != nil {
		w.svc.stop()
		<-w.svc.done
		w.svc.stop = nil
	}
}

func (w *Worker) identity() string {
	if w.opts.Identity != "" {
		return w.opts.Identity
	}
	return fmt.Sprintf("%d@%s", os.Getpid(), hostname())
}

// publishServices sends one entry per declared service to the services entity.
func (w *Worker) publishServices(ctx context.Context) error {
	now := time.Now()
	id := w.identity()
	byName := map[string]*serviceBreaker{}
	for _, b := range w.svc.breakers {
		byName[b.name] = b
	}
	raw := make([]json.RawMessage, 0, len(w.opts.Services))
	for _, d := range w.opts.Services {
		st := breakerState{Service: d.Name, UpdatedAt: now.UTC()}
		if b, ok := byName[d.Name]; ok {
			st = b.status(now)
		}
		e := serviceEntry{Name: d.Name + "@" + id, serviceStatus: serviceStatus{breakerState: st, Worker: id,
			RatePerSecond: d.Options.RatePerSecond, MaxConcurrent: d.Options.MaxConcurrent}}
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode the state of service %s: %w", d.Name, err)
		}
		raw = append(raw, b)
	}
	queue := w.opts.TaskQueue
	seed := entity.CatalogState{TaskQueue: queue}
	seed.Merge(append([]json.RawMessage(nil), raw...), now)
	sid := protocol.ServicesID(queue)
	_, err := w.client.SignalWithStartWorkflow(ctx, sid, protocol.CatalogPublishSignal, raw,
		sdkclient.StartWorkflowOptions{
			ID:            sid,
			TaskQueue:     queue,
			Memo:          map[string]any{protocol.MemoCatalog: seed},
			StaticSummary: "gateflow services' state of task queue " + queue,
		}, protocol.CatalogWorkflowType, entity.CatalogState{TaskQueue: queue})
	if err != nil {
		return fmt.Errorf("signal %s: %w", sid, err)
	}
	return nil
}

// markWaitingService marks the running steps of st whose activity waits for its next
// attempt after failing fast on an open breaker: status StepWaitingService, and the
// Error names the service and when the next attempt is due.
func markWaitingService(st *runs.State, pending []*workflowpb.PendingActivityInfo) {
	if st == nil {
		return
	}
	for _, a := range pending {
		f := a.GetLastFailure()
		info := f.GetApplicationFailureInfo()
		if info.GetType() != string(ErrorServiceUnavailable) || a.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
			continue
		}
		var sw serviceWait
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
