package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The services' state is published, per worker, in a catalog entity of its own (workflow
// ID "gateflow-catalog-<queue>/services", run on the task queue like the flows' catalog): each
// worker sends one entry per declared service when it starts and again whenever one of
// its breakers changes state, keyed by service and worker identity, so the entity holds
// the latest state every worker reported. flowclient.Client.Services reads it from the entity's Memo.

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
		st := core.ServiceBreakerState{Service: d.Name, UpdatedAt: now.UTC()}
		if b, ok := byName[d.Name]; ok {
			st = b.status(now)
		}
		e := protocol.ServiceEntry{Name: d.Name + "@" + id, ServiceStatus: core.ServiceStatus{ServiceBreakerState: st, Worker: id,
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
