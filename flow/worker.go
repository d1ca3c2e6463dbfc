package flow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
)

// DefaultTaskQueue is the task queue workers and clients use when none is given.
const DefaultTaskQueue = "gateflow"

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// TaskQueue is the Temporal task queue to serve. Default DefaultTaskQueue.
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
	// EventSinks receive the runs' events (status changes, steps, people, budget): a
	// WebhookSink, a LogSink, or your own. Deliveries are activities, so the workers of a
	// task queue must agree on having sinks: adding sinks is safe for runs in progress,
	// removing them while runs started with them go on is not (keep a LogSink instead).
	EventSinks []EventSink
	// Tags are what this worker offers (e.g. "gpu", "eu"): runs started with WorkerTags go
	// only to workers that have every tag they need. At most MaxWorkerTags.
	Tags []string
	// MaxCostUSD is the default money cap of runs whose start options and flow set none.
	MaxCostUSD *decimal.Decimal
	// Quotas are monthly spending limits; new runs are refused once one is exhausted.
	Quotas Quotas
	// Directory resolves the "group:" names of approvers and input assignees (see
	// approval.LoadDirectory for a file-based one). Nil: groups have no members.
	Directory approval.Directory
	// Worker passes further options to the Temporal worker. TaskQueue, Identity and
	// StopTimeout above take precedence over the same settings here.
	Worker worker.Options
}

// ProvidersFromEnv configures the agent providers the environment describes: OpenAI (or
// any compatible server) when OPENAI_API_KEY or OPENAI_BASE_URL is set, Anthropic when
// ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL is set.
func ProvidersFromEnv() (map[string]llm.Provider, error) {
	out := map[string]llm.Provider{}
	if os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "" {
		p, err := llm.OpenAIFromEnv()
		if err != nil {
			return nil, err
		}
		out[llm.ProviderOpenAI] = p
	}
	if os.Getenv("ANTHROPIC_API_KEY") != "" || os.Getenv("ANTHROPIC_BASE_URL") != "" {
		p, err := llm.AnthropicFromEnv()
		if err != nil {
			return nil, err
		}
		out[llm.ProviderAnthropic] = p
	}
	return out, nil
}

// Worker serves defined flows and gateflow's built-in step activities on a task queue.
type Worker struct {
	client client.Client
	opts   WorkerOptions
	flows  []Definition
	extra  []registration
	ws     []worker.Worker
}

type registration struct {
	fn   any
	name string
}

// NewWorker creates a worker for flows. Nothing runs until Start or Run; mistakes in the
// definitions (see Define) are reported by Start.
func NewWorker(c client.Client, opts WorkerOptions, flows ...Definition) *Worker {
	if opts.TaskQueue == "" {
		opts.TaskQueue = DefaultTaskQueue
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

// TaskQueue is the queue the worker serves.
func (w *Worker) TaskQueue() string { return w.opts.TaskQueue }

// Flows lists the catalog entries of the worker's flows.
func (w *Worker) Flows() []WorkflowInfo {
	out := make([]WorkflowInfo, 0, len(w.flows))
	for _, f := range w.flows {
		out = append(out, f.Info())
	}
	return out
}

// Validate reports every mistake in the worker's flows: definition errors and duplicate
// names.
func (w *Worker) Validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, f := range w.flows {
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
		if f.Name() == CatalogWorkflowType || f.Name() == MailboxWorkflowType || f.Name() == LedgerWorkflowType ||
			f.Name() == ControlWorkflowType || f.Name() == SemaphoreWorkflowType {
			errs = append(errs, fmt.Errorf("flow name %s is reserved", f.Name()))
		}
		seen[f.Name()] = true
	}
	return errors.Join(errs...)
}

// Start registers the flows and activities, starts polling and publishes the catalog. It
// returns once the catalog is readable by clients.
func (w *Worker) Start() error {
	if err := w.Validate(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	o := w.opts.Worker
	o.WorkerStopTimeout = w.opts.StopTimeout
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
	queues, err := TaggedQueues(w.opts.TaskQueue, w.opts.Tags)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	// One Temporal worker per queue: the base queue, and one per combination of the
	// worker's tags, so a run that needs tags T reaches any worker that has all of T.
	for _, q := range queues {
		tw := worker.New(w.client, q, o)
		if err := RegisterWorkflows(tw, w.opts, w.flows...); err != nil {
			return err
		}
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.publish(ctx); err != nil {
		w.Stop()
		return fmt.Errorf("worker: publish catalog of %s: %w", w.opts.TaskQueue, err)
	}
	if err := w.ensureSchedules(ctx); err != nil {
		w.Stop()
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// WorkflowRegistry is what workflows are registered on: a Temporal worker, a
// testsuite.TestWorkflowEnvironment or a worker.WorkflowReplayer.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// ActivityRegistry is what activities are registered on: a Temporal worker or a
// testsuite.TestWorkflowEnvironment.
type ActivityRegistry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// RegisterWorkflows registers flows (wrapped in gateflow's run wrapper with the defaults of
// opts) and gateflow's entity workflows (catalog, mailbox, ledger) on r. NewWorker's Start
// does this; testsuite uses it for unit tests and replays.
func RegisterWorkflows(r WorkflowRegistry, opts WorkerOptions, flows ...Definition) error {
	cfg := runConfig{guards: opts.Guards, maxAttempts: opts.MaxAttempts, directory: opts.Directory,
		maxCost: opts.MaxCostUSD, quotas: opts.Quotas, events: len(opts.EventSinks) > 0}
	for _, f := range flows {
		if f == nil {
			return errors.New("register: a flow is nil")
		}
		if err := f.Err(); err != nil {
			return fmt.Errorf("register: %w", err)
		}
		r.RegisterWorkflowWithOptions(f.workflowWith(cfg), workflow.RegisterOptions{Name: f.Name()})
	}
	r.RegisterWorkflowWithOptions(catalogWorkflow, workflow.RegisterOptions{Name: CatalogWorkflowType})
	r.RegisterWorkflowWithOptions(mailboxWorkflow, workflow.RegisterOptions{Name: MailboxWorkflowType})
	r.RegisterWorkflowWithOptions(ledgerWorkflow, workflow.RegisterOptions{Name: LedgerWorkflowType})
	r.RegisterWorkflowWithOptions(controlWorkflow, workflow.RegisterOptions{Name: ControlWorkflowType})
	r.RegisterWorkflowWithOptions(semaphoreWorkflow, workflow.RegisterOptions{Name: SemaphoreWorkflowType})
	return nil
}

// RegisterActivities registers gateflow's built-in step activities (shell, HTTP, agent with
// opts' providers and prices) and its internal ones (mailbox, monthly ledgers) on r.
func RegisterActivities(r ActivityRegistry, opts WorkerOptions) error {
	providers := opts.Providers
	if providers == nil {
		var err error
		if providers, err = ProvidersFromEnv(); err != nil {
			return fmt.Errorf("worker: agent providers: %w", err)
		}
	}
	prices := opts.Prices
	if prices == nil {
		prices = llm.DefaultPrices()
	}
	agents := &activities.AgentActivities{Router: llm.NewRouter(providers), Prices: prices}
	queue := opts.TaskQueue
	if queue == "" {
		queue = DefaultTaskQueue
	}
	qa := quotaActivities{queue: queue, quotas: opts.Quotas}
	r.RegisterActivityWithOptions(qa.charge, activity.RegisterOptions{Name: QuotaChargeActivity})
	r.RegisterActivityWithOptions(qa.check, activity.RegisterOptions{Name: QuotaCheckActivity})
	mb := mailboxActivities{queue: queue}
	r.RegisterActivityWithOptions(mb.subscribe, activity.RegisterOptions{Name: MailboxSubscribe})
	r.RegisterActivityWithOptions(mb.unsubscribe, activity.RegisterOptions{Name: MailboxUnsubscribe})
	r.RegisterActivityWithOptions(controlActivities{}.hold, activity.RegisterOptions{Name: controlHoldActivity})
	r.RegisterActivityWithOptions(eventActivities{sinks: opts.EventSinks}.deliver, activity.RegisterOptions{Name: EventActivity})
	sa := semaphoreActivities{queue: queue}
	r.RegisterActivityWithOptions(sa.signal, activity.RegisterOptions{Name: semaphoreCall})
	r.RegisterActivityWithOptions(sa.check, activity.RegisterOptions{Name: semaphoreCheck})
	r.RegisterActivityWithOptions(activities.RunShell, activity.RegisterOptions{Name: activities.ShellActivity})
	r.RegisterActivityWithOptions(activities.RunHTTP, activity.RegisterOptions{Name: activities.HTTPActivity})
	r.RegisterActivityWithOptions(agents.RunAgent, activity.RegisterOptions{Name: activities.AgentActivity})
	return nil
}

// Stop stops polling and waits up to StopTimeout for in-flight steps.
func (w *Worker) Stop() {
	for _, tw := range w.ws {
		tw.Stop()
	}
	w.ws = nil
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
	}
	initial := Catalog{TaskQueue: w.opts.TaskQueue}
	seed := initial
	seed.merge(entries, now)
	_, err := w.client.SignalWithStartWorkflow(ctx, CatalogWorkflowID(w.opts.TaskQueue), CatalogPublishSignal, entries,
		client.StartWorkflowOptions{
			ID:            CatalogWorkflowID(w.opts.TaskQueue),
			TaskQueue:     w.opts.TaskQueue,
			Memo:          map[string]any{MemoCatalog: seed},
			StaticSummary: "gateflow catalog of task queue " + w.opts.TaskQueue,
		}, CatalogWorkflowType, initial)
	if err != nil {
		return err
	}
	for {
		cat, err := readCatalog(ctx, w.client, w.opts.TaskQueue)
		if err == nil && catalogHas(cat, entries) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("catalog not updated: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func catalogHas(cat *Catalog, entries []WorkflowInfo) bool {
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

// MaxWorkerTags bounds a worker's tags (it polls one queue per combination of them).
const MaxWorkerTags = 4

// TaggedQueue is the task queue of runs that need tags on base: base itself without tags,
// else base@t1+t2 with the tags sorted.
func TaggedQueue(base string, tags []string) string {
	if len(tags) == 0 {
		return base
	}
	t := append([]string(nil), tags...)
	sort.Strings(t)
	return base + "@" + strings.Join(t, "+")
}

// TaggedQueues lists the queues a worker with tags polls: base and one per non-empty
// combination of its tags.
func TaggedQueues(base string, tags []string) ([]string, error) {
	if err := ValidateTags(tags); err != nil {
		return nil, err
	}
	if len(tags) > MaxWorkerTags {
		return nil, fmt.Errorf("%d tags: a worker has at most %d", len(tags), MaxWorkerTags)
	}
	t := append([]string(nil), tags...)
	sort.Strings(t)
	queues := []string{base}
	for mask := 1; mask < 1<<len(t); mask++ {
		var subset []string
		for i := range t {
			if mask&(1<<i) != 0 {
				subset = append(subset, t[i])
			}
		}
		queues = append(queues, TaggedQueue(base, subset))
	}
	return queues, nil
}

// ValidateTags checks tag names: 1-63 lower-case letters, digits and _.-, each once.
func ValidateTags(tags []string) error {
	seen := map[string]bool{}
	for _, t := range tags {
		if !tagPattern.MatchString(t) {
			return fmt.Errorf("tag %q: want 1-63 lower-case letters, digits and _.- starting with a letter or digit", t)
		}
		if seen[t] {
			return fmt.Errorf("tag %s given twice", t)
		}
		seen[t] = true
	}
	return nil
}
