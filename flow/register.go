package flow

import (
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// RegisterWorkflows registers flows (wrapped in gateflow's run wrapper with the defaults of
// opts) and gateflow's entity workflows (catalog, mailbox, ledger) on r. NewWorker's Start
// does this; testsuite uses it for unit tests and replays.
func RegisterWorkflows(r worker.WorkflowRegistry, opts WorkerOptions, flows ...Definition) error {
	return registerWorkflows(r, opts, false, flows)
}

// registerWorkflows is RegisterWorkflows; lossTolerant says the activities run
// lossInterceptor (a Worker's do), so steps may be scheduled with room for worker losses.
func registerWorkflows(r worker.WorkflowRegistry, opts WorkerOptions, lossTolerant bool, flows []Definition) error {
	cfg, err := runConfigOf(opts, flows)
	cfg.lossTolerant = lossTolerant
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	for _, f := range flows {
		if f == nil {
			return errors.New("register: a flow is nil")
		}
		if err := f.Err(); err != nil {
			return fmt.Errorf("register: %w", err)
		}
		r.RegisterWorkflowWithOptions(f.workflowWith(cfg), workflow.RegisterOptions{Name: f.Name()})
	}
	entity.RegisterWorkflows(r)
	return nil
}

// runConfigOf is the run configuration of flows served with opts: the worker's defaults,
// its gate types and the triggers among flows.
func runConfigOf(opts WorkerOptions, flows []Definition) (runConfig, error) {
	cfg := runConfig{guards: opts.Guards, maxAttempts: opts.MaxAttempts, directory: opts.Directory, auth: opts.Auth,
		maxCost: opts.MaxCostUSD, quotas: opts.Quotas, events: opts.EventSinks, triggers: triggersOf(flows)}
	if err := events.Check(opts.EventSinks); err != nil {
		return runConfig{}, err
	}
	gateActs, err := newGateActivities(opts.GateResolvers)
	if err != nil {
		return runConfig{}, err
	}
	cfg.gateTypes = gateActs.types
	cfg.services, cfg.baseQueue = serviceNames(opts.Services), opts.TaskQueue // service.go
	cfg.mcpServers = mcpServerNames(opts.MCPServers)                          // worker_mcp.go
	cfg.prices = workerPrices(opts)                                           // agent_money.go
	if cfg.baseQueue == "" {
		cfg.baseQueue = core.DefaultTaskQueue
	}
	return cfg, nil
}

// RegisterActivities registers gateflow's built-in step activities (shell, HTTP, agent with
// opts' providers and prices, the gate poll with opts' gate resolvers) and its internal
// ones (mailbox, monthly ledgers) on r.
func RegisterActivities(r worker.ActivityRegistry, opts WorkerOptions) error {
	providers := opts.Providers
	if providers == nil {
		var err error
		if providers, err = llm.ProvidersFromEnv(); err != nil {
			return fmt.Errorf("worker: agent providers: %w", err)
		}
	}
	agents := &activities.AgentActivities{Router: llm.NewRouter(providers), Prices: workerPrices(opts)}
	queue := opts.TaskQueue
	if queue == "" {
		queue = core.DefaultTaskQueue
	}
	entity.RegisterActivities(r, queue, opts.Quotas.LimitFor)
	sinks := eventActivities{sinks: opts.EventSinks}
	r.RegisterActivityWithOptions(sinks.deliver, activity.RegisterOptions{Name: protocol.EventActivity})
	r.RegisterActivityWithOptions(sinks.deliverBatch, activity.RegisterOptions{Name: protocol.EventBatchActivity})
	r.RegisterActivityWithOptions(newItemActivities(opts.ItemProviders).items, activity.RegisterOptions{Name: protocol.ItemsActivity})
	gateActs, err := newGateActivities(opts.GateResolvers)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	r.RegisterActivityWithOptions(gateActs.poll, activity.RegisterOptions{Name: protocol.GatePollActivity})
	cache := &cacheActivities{url: opts.BlobURL, store: opts.blobs}
	r.RegisterActivityWithOptions(cache.lookup, activity.RegisterOptions{Name: cacheLookupActivity})
	r.RegisterActivityWithOptions(cache.put, activity.RegisterOptions{Name: cacheStoreActivity})
	r.RegisterActivityWithOptions(triggerStartActivity, activity.RegisterOptions{Name: protocol.TriggerStartActivity})
	registerMCP(r, opts) // worker_mcp.go
	shell, err := shellActivity(opts.ShellOutputBytes, opts.blobs != nil || opts.BlobURL != "")
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	r.RegisterActivityWithOptions(withArtifacts(opts, shell), activity.RegisterOptions{Name: activities.ShellActivity}) // artifacts.go
	r.RegisterActivityWithOptions(activities.RunHTTP, activity.RegisterOptions{Name: activities.HTTPActivity})
	r.RegisterActivityWithOptions(agents.RunAgent, activity.RegisterOptions{Name: activities.AgentActivity})
	r.RegisterActivityWithOptions(agents.RunAgentTurn, activity.RegisterOptions{Name: activities.AgentTurnActivity})
	return nil
}
