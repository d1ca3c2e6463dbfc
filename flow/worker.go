package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gateflow/gateflow/items"

	"github.com/gateflow/gateflow/service"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// TaskQueue is the Temporal task queue to serve. Default core.DefaultTaskQueue.
	TaskQueue string
	// Identity names the worker in Temporal and in the catalog. Default: the SDK's
	// (pid@host).
	Identity string
	// StopTimeout is the grace period in-flight steps get when the worker stops; after it
	// their contexts are cancelled (a shell step's process group is killed) and Temporal
	// retries them on another worker. Default 30s.
	StopTimeout time.Duration
	// Providers answer agent steps, by provider name ("openai", "anthropic", "scripted"; an
	// agent step picks one by its Provider field or its model's prefix). Nil means
	// ProvidersFromEnv.
	Providers map[string]llm.Provider
	// Prices price agent tokens (USD per million tokens per model). Nil means
	// llm.DefaultPrices().
	Prices llm.PriceTable
	// Guards are the default limits of the flows served (a flow's WithGuards overrides
	// them field by field); zero fields mean DefaultGuards.
	Guards Guards
	// MaxAttempts is the default number of run attempts for flows that set none.
	MaxAttempts int
	// EventSinks receive the runs' events (status changes, steps, people, budget): an
	// events.Webhook, an events.Log, or your own, narrowed with events.Subscribe (package
	// events says how delivery works). The runs record their deliveries, so the workers of
	// a task queue must agree on the sinks and their subscriptions: adding sinks is safe
	// for runs in progress; removing them or changing what they subscribe to while runs
	// started with them go on is not (keep a Log sink instead). A nil sink or an unknown
	// event type in a subscription is an error of Start.
	EventSinks []events.Sink
	// ItemProviders list the items of fan-outs (see Items), by their names.
	ItemProviders []items.Provider
	// GateResolvers decide polled gates (Context.Gate), by their types, besides the
	// built-in "http" and "command" (package gates). An empty or repeated type is an
	// error of Start. Every worker of a task queue must have the same resolvers: a run
	// refuses a gate type its worker lacks.
	GateResolvers []gates.Resolver
	// Tags are what this worker offers (e.g. "gpu", "eu"): runs started with WorkerTags go
	// only to workers that have every tag they need. At most protocol.MaxWorkerTags.
	Tags []string
	// MaxCostUSD is the default money cap of runs whose start options and flow set none.
	MaxCostUSD *decimal.Decimal
	// Quotas are monthly spending limits: a new run is admitted only when its cap fits what
	// the month has not spent or reserved (see flowclient.Client.Start); runs going are never stopped.
	Quotas budget.Quotas
	// Directory resolves the "group:" names of approvers and input assignees (see
	// approval.LoadDirectory for a file-based one). Nil: groups have no members.
	Directory approval.Directory
	// Auth makes decisions verifiable: each run pins this policy when it starts and checks
	// every vote and answer against it (a proof signed with a key of its directory, or a
	// token of its identity provider; see package auth). With Auth.Required, decisions
	// without a proof and votes sent as Signals are refused. Nil: decisions carry the
	// identity their sender typed, unverified.
	Auth *auth.Policy
	// Services are the services the worker's steps call, with their limits (see package service).
	Services []service.Def
	// BlobURL is the blob store the worker keeps its own data in: the step cache (Cache)
	// and shell steps' artifacts (activities.Shell Outputs and Inputs; every worker of the
	// task queue needs the same store). file:///dir, s3://bucket?region=..., gs://bucket
	// or azblob://container; opened by Start, closed by Stop. Empty: no store, and steps
	// with Cache or artifacts fail.
	BlobURL string
	// ShellOutputBytes bounds how much of stdout and of stderr a shell step keeps. A
	// result carries at most activities.MaxOutputBytes (256 KiB) of each (the head of
	// stdout, the tail of stderr; ShellResult.Truncated says it lacks some), so the
	// workflow never decodes a big one. With a BlobURL a longer stream is streamed whole
	// to the store, up to ShellOutputBytes (e.g. activities.MaxStoredOutputBytes), and the
	// result refers to it (ShellResult.StdoutBlob, StderrBlob). 0 means
	// activities.MaxOutputBytes. Negative, or over activities.MaxOutputBytes without a
	// BlobURL, is an error of Start.
	ShellOutputBytes int
	// MCPServers are the MCP servers whose tools the worker's steps call (Context.MCP),
	// over stdio (a command the worker starts at its first use) or streamable HTTP; the
	// worker registers the MCP activities (activities.MCPCallActivity …) when there are
	// any. Every worker of a task queue must declare the same servers: a run refuses a
	// server its worker lacks. Invalid or repeated names are errors of Start.
	MCPServers []mcptools.Server
	// blobs is the store Start opened from BlobURL.
	blobs *blob.Store
	// mcp is the pool Start opened for MCPServers, closed by Stop.
	mcp *mcptools.Pool
	// Worker passes further options to the Temporal worker. TaskQueue, Identity and
	// StopTimeout above take precedence over the same settings here.
	Worker worker.Options
}

// Worker serves defined flows and gateflow's built-in step activities on a task queue.
type Worker struct {
	client client.Client
	opts   WorkerOptions
	extra  []registration
	ws     []worker.Worker
	svc    servicesPart // service_status.go

	// mu guards flows, started and late: AddFlows may run while the worker serves.
	mu    sync.Mutex
	flows []Definition
	// started is set from Start to Stop; flows added meanwhile are late (worker_late.go).
	started bool
	late    *lateFlows
}

type registration struct {
	fn   any
	name string
}

// NewWorker creates a worker for flows. Nothing runs until Start or Run; mistakes in the
// definitions (see Define) are reported by Start.
func NewWorker(c client.Client, opts WorkerOptions, flows ...Definition) *Worker {
	if opts.TaskQueue == "" {
		opts.TaskQueue = core.DefaultTaskQueue
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 30 * time.Second
	}
	return &Worker{client: c, opts: opts, flows: flows}
}

// RegisterActivity registers a custom activity so handlers can run it as a step with
// Step or ActivityStep. name is the activity's name; empty means the function's name (what
// Step uses when given the function). Call it before Start.
func (w *Worker) RegisterActivity(fn any, name string) {
	if name == "" {
		name = activityName(fn)
	}
	w.extra = append(w.extra, registration{fn: fn, name: name})
}

// Publish sends the worker's catalog entries (Flows, whose Info may have changed since
// Start, e.g. a reloaded definition's hash) and registries to the task queue's catalog
// again, and waits until clients can read them. Call it after Start.
func (w *Worker) Publish(ctx context.Context) error {
	if err := w.publish(ctx); err != nil {
		return fmt.Errorf("worker: publish catalog of %s: %w", w.opts.TaskQueue, err)
	}
	return nil
}

// TaskQueue is the queue the worker serves.
func (w *Worker) TaskQueue() string { return w.opts.TaskQueue }

// Flows lists the catalog entries of the worker's flows.
func (w *Worker) Flows() []core.WorkflowInfo {
	flows := w.flowList()
	out := make([]core.WorkflowInfo, 0, len(flows))
	for _, f := range flows {
		info := f.Info()
		if info.Kind == "" {
			info.Kind = protocol.KindGoFlow
		}
		out = append(out, info)
	}
	return out
}

// Validate reports every mistake in the worker's flows: definition errors and duplicate
// names.
func (w *Worker) Validate() error {
	return checkFlows(w.opts, nil, w.flowList())
}

// checkFlows reports every mistake in flows, to be served besides served (already
// checked): definition errors, duplicate and reserved names, gate types without a
// resolver, triggers from flows not served.
func checkFlows(opts WorkerOptions, served, flows []Definition) error {
	var errs []error
	seen := map[string]bool{}
	for _, f := range served {
		seen[f.Name()] = true
	}
	for i, f := range flows {
		if f == nil {
			errs = append(errs, fmt.Errorf("flow %d is nil", i))
			continue
		}
		if err := f.Err(); err != nil {
			errs = append(errs, err)
		}
		if seen[f.Name()] {
			errs = append(errs, fmt.Errorf("flow %s is defined twice", f.Name()))
		}
		if entity.Reserved(f.Name()) || f.Name() == protocol.RegistryEntryName {
			errs = append(errs, fmt.Errorf("flow name %s is reserved for gateflow's own workflows", f.Name()))
		}
		seen[f.Name()] = true
	}
	if ga, err := newGateActivities(opts.GateResolvers); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, ga.checkFlows(flows)...)
	}
	errs = append(errs, checkServices(opts.Services))     // service.go
	errs = append(errs, checkMCPServers(opts.MCPServers)) // worker_mcp.go
	errs = append(errs, checkTriggers(append(slices.Clone(served), flows...))...)
	return errors.Join(errs...)
}

// Start registers the flows and activities, and the dynamic workflow that serves flows
// added later (AddFlows), starts polling and publishes the catalog. It returns once the
// catalog is readable by clients.
func (w *Worker) Start() error {
	flows, err := w.begin()
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if err := w.openBlobs(); err != nil { // cache.go
		return fmt.Errorf("worker: %w", err)
	}
	if err := w.openMCP(); err != nil { // worker_mcp.go
		w.Stop()
		return fmt.Errorf("worker: %w", err)
	}
	o := w.opts.Worker
	o.WorkerStopTimeout = w.opts.StopTimeout
	// Retries of failed steps are spread by a deterministic jitter (worker_jitter.go); a
	// step's attempts lost with their worker are not counted (worker_losses.go).
	o.Interceptors = append([]interceptor.WorkerInterceptor{&jitterInterceptor{}, &lossInterceptor{}}, o.Interceptors...)
	if len(w.opts.EventSinks) > 0 { // step.retrying of steps Temporal retries (run_events_retry.go)
		o.Interceptors = append([]interceptor.WorkerInterceptor{&retryEvents{sinks: eventActivities{sinks: w.opts.EventSinks}}}, o.Interceptors...)
	}
	if o.MaxHeartbeatThrottleInterval == 0 {
		// Steps learn of a cancellation on their next heartbeat: keep that prompt.
		o.MaxHeartbeatThrottleInterval = 2 * time.Second
	}
	if o.DefaultHeartbeatThrottleInterval == 0 {
		o.DefaultHeartbeatThrottleInterval = 2 * time.Second
	}
	if w.opts.Identity != "" {
		o.Identity = w.opts.Identity
	}
	queues, err := protocol.TaggedQueues(w.opts.TaskQueue, w.opts.Tags)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	// One Temporal worker per queue: the base queue, and one per combination of the
	// worker's tags, so a run that needs tags T reaches any worker that has all of T.
	for _, q := range queues {
		tw := worker.New(w.client, q, o)
		if err := registerWorkflows(tw, w.opts, true, flows); err != nil {
			w.Stop()
			return err
		}
		// Flows added after Start run through the dynamic workflow (worker_late.go).
		tw.RegisterDynamicWorkflow(w.dynamicWorkflow, workflow.DynamicRegisterOptions{})
		if err := RegisterActivities(tw, w.opts); err != nil {
			return err
		}
		for _, r := range w.extra {
			tw.RegisterActivityWithOptions(r.fn, activity.RegisterOptions{Name: r.name})
		}
		if err := tw.Start(); err != nil {
			w.Stop()
			return fmt.Errorf("worker: start on %s: %w", q, err)
		}
		w.ws = append(w.ws, tw)
	}
	if err := w.startServices(o); err != nil { // service_worker.go
		w.Stop()
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.publish(ctx); err != nil {
		w.Stop()
		return fmt.Errorf("worker: publish catalog of %s: %w", w.opts.TaskQueue, err)
	}
	if err := w.startServicePublisher(ctx); err != nil {
		w.Stop()
		return fmt.Errorf("worker: %w", err)
	}
	if err := w.ensureSchedules(ctx, flows); err != nil {
		w.Stop()
		return fmt.Errorf("worker: %w", err)
	}
	if err := w.ensureOnce(ctx, flows); err != nil {
		w.Stop()
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// Stop stops polling and waits up to StopTimeout for in-flight steps.
func (w *Worker) Stop() {
	w.stopServicePublisher()
	for _, tw := range w.ws {
		tw.Stop()
	}
	w.ws = nil
	w.closeBlobs()
	w.closeMCP()
	w.mu.Lock()
	w.started = false
	w.mu.Unlock()
}

// Run starts the worker and blocks until interrupt delivers, then stops it.
func (w *Worker) Run(interrupt <-chan os.Signal) error {
	if err := w.Start(); err != nil {
		return err
	}
	<-interrupt
	w.Stop()
	return nil
}

// publish sends the worker's entries to the task queue's catalog workflow (starting it if
// needed) and waits until clients can read them.
func (w *Worker) publish(ctx context.Context) error {
	now := time.Now().UTC().Truncate(time.Millisecond)
	identity := w.opts.Identity
	if identity == "" {
		identity = fmt.Sprintf("%d@%s", os.Getpid(), hostname())
	}
	entries := w.Flows()
	for i := range entries {
		entries[i].PublishedBy = identity
		entries[i].PublishedAt = now
		if q, ok := w.opts.Quotas.PerWorkflow[entries[i].Name]; ok {
			entries[i].MonthlyQuotaUSD = q.String()
		}
		if w.opts.Quotas.MonthlyUSD != nil {
			entries[i].OverallQuotaUSD = w.opts.Quotas.MonthlyUSD.String()
		}
		if w.opts.MaxCostUSD != nil {
			entries[i].WorkerMaxCostUSD = w.opts.MaxCostUSD.String()
		}
		entries[i].QuotaReservations = true
	}
	raw := make([]json.RawMessage, len(entries), len(entries)+1)
	for i, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode the catalog entry of %s: %w", e.Name, err)
		}
		raw[i] = b
	}
	reg, err := w.registryEntry(identity, now)
	if err != nil {
		return err
	}
	raw = append(raw, reg)
	if err := entity.PublishCatalog(ctx, w.client, w.opts.TaskQueue, raw, now); err != nil {
		return err
	}
	for {
		cat, err := startplan.ReadCatalog(ctx, w.client, w.opts.TaskQueue)
		if err == nil && catalogHas(cat, entries) && cat.Workers != nil && !cat.Workers.PublishedAt.Before(now) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("catalog not updated: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func catalogHas(cat *core.Catalog, entries []core.WorkflowInfo) bool {
	for _, e := range entries {
		got, ok := cat.Lookup(e.Name)
		if !ok || got.PublishedAt.Before(e.PublishedAt) {
			return false
		}
	}
	return true
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}
