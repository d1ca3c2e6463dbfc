/*
Package flow is gateflow's authoring API and its runtime on Temporal: you write a plain Go
function, flow runs it as a Temporal workflow whose steps are activities, whose people
decide through Updates and Signals, and whose money is kept under a budget. Package flow
is what a workflow author and a worker need; package flowclient starts, watches and
decides runs.

# Defining a flow

A flow is a handler, a function of a *Context and an input, defined once with Define. The
name given to Define is the Temporal workflow type; inputs and outputs are JSON.

	var Release = flow.Define("release", release,
		flow.Description("Build, review and ship"), flow.Category("delivery/web"),
		flow.MaxCostUSD(decimal.RequireFromString("2.00")), flow.Version("3"))

	func release(ctx *flow.Context, in ReleaseInput) (ReleaseOutput, error) {
		build, err := ctx.Shell("build", activities.Shell{Command: "make build"})
		if err != nil {
			return ReleaseOutput{}, err
		}
		...
	}

Define never panics: a bad name or option is kept and reported by Flow.Err, by
Worker.Validate and by the worker binary. Options set the flow's description and category
(shown by `flowctl workflows` and stored in the FlowCategory search attribute), its version
(recorded at start; a worker with another version fails the run rather than replaying it
wrongly), its default money cap, run attempts (MaxAttempts), guards (WithGuards: child
depth, fan-out, tokens, wall time and MaxSteps, the most steps a run records, its own
steps, default 10,000; the step past a limit is refused with a *GuardError), at most n
live runs (MaxRuns with core.OverflowQueue, core.OverflowRefuse or core.OverflowReplace: a run waits in
pending for "permit:flow:NAME", a start is refused with a *flowclient.MaxRunsError, or the oldest
live run is cancelled "replaced by RUN"; MaxRunsPerKey counts them per key of the input,
group "flow:NAME:KEY"), budget policy (OnBudgetExceeded) and how runs
start besides flowclient.Client.Start (see Starts below).

A handler is workflow code and follows Temporal's determinism rules: no goroutines,
channels, select, clocks, randomness, map iteration order or I/O outside steps. Use
ctx.Now, ctx.Sleep and steps instead; `make lint` runs flowvet (package analyzer), which
finds handlers by their type and reports these constructs in them and in what they call.
ctx.Workflow gives the underlying workflow.Context for Temporal APIs flow does not wrap.

# Starts

A flow is started by a client (package flowclient: Client.Start, flowctl start), and also,
as its options say:

  - Schedule: a Temporal Schedule the worker creates or updates when it starts, named by
    its position or by its schedule.ID.
  - Once(input): the worker ensures, when it starts, that the flow was started once, with
    the workflow ID "once:<flow>@<queue>" and Temporal's REJECT_DUPLICATE reuse and
    USE_EXISTING conflict policies, so workers starting together start it once and an
    ended run is not started again; flowclient.Client.RestartOnce starts it again when asked.
  - OnRunOf(other, core.WhenCompleted, core.WhenFailed): a run of other that ends so starts the flow
    with its output as input. The ended run's wrapper does it last, through an activity,
    with the workflow ID "<flow>/triggered-by/<run ID>/<Temporal run ID>", so a retry or a
    replay never starts it twice. Both flows must be on the same worker. TriggerInput adds
    a condition and an input mapping, which the ended run evaluates and records.
  - OnSignal(name): flowclient.Client.SignalStart sends the signal to the run its key started, or
    starts one with the payload as input (SignalWithStartWorkflow, workflow ID
    "<flow>/on-signal/<name>/<key>"): one run per key.

Every such start is planned as flowclient.Client.Start plans it (the input checked against the
flow's input type, the flow's start defaults, the start options in the Memo); the runs
check the monthly quotas themselves. The catalog (core.WorkflowInfo, core.Catalog) lists a
flow's starts.

# Steps

Every step is a Temporal activity whose ActivityID and Summary are the step's name, so the
Web UI's timeline reads like the handler, and every step is recorded in the run's
runs.State (status, attempt, duration, output preview, cost, tokens).

	ctx.Shell(name, activities.Shell{...})  // a process; cancellation kills its process group
	ctx.HTTP(name, activities.HTTP{...})    // a request; secrets resolve on the worker only
	ctx.Agent(name, activities.Agent{...})  // an AI-agent call that costs money
	flow.Step[T](ctx, name, fn, args...)    // any activity registered on the worker
	ctx.AgentLoop(name, flow.AgentLoop{...}) // an agent that calls tools, turn by turn
	ctx.Skip(name, reason); ctx.Sleep(name, d); ctx.OnError(name, spec); ctx.Always(name, spec)

An agent loop (AgentLoop, agent_loop.go) runs in the workflow: each model turn is its own
activity (activities.AgentTurnActivity) recorded as the step <name>/turn-<n>, each tool
call the model makes is its own step nested under <name>, at most 4 at
once, with the results sent back in the model's order. Tools (agent_tools*.go) are
registered activities (ActivityTool, the schema from the Go parameter type, the arguments
decoded strictly) and shell and HTTP step templates whose declared parameters the model
fills (ShellTool, HTTPTool), tools of the worker's MCP servers (MCPTool: the servers'
catalogs are read once before turn 1 as the step <name>/tools and recorded, so the model
sees each tool's description and schema as listed and replay never asks a server) and
flows run as children (FlowTool: the schema from the input type, the output back as JSON,
the child capped by what the loop leaves and its cost counted for the loop and the run);
AgentLoop.Reads are MCP resources read before turn 1 (steps <name>/read-<n>) into the
conversation; a tool's failure, an unknown tool and bad arguments go back to the model
unless the tool is fatal (ToolFatal). People take part (agent_approve.go, agent_input.go):
a tool made with ToolApproval waits before each call at the approval gate
<name>/<tool>[#n], which shows the tool, its arguments and the model's reason; a refusal
goes back to the model as the tool's result, and an approver's edited arguments
(approval.Vote.Arguments, covered by a signed vote's proof) are checked against the tool's
schema when the vote arrives and used for the call; InputTool lets the model ask a person
a question through Input. Each turn is a paid step: the model's price is pinned from the worker's price table when the loop
starts (a SideEffect, so replay does not depend on the worker's table; agent_money.go),
so every turn, the first too, reserves its worst case (activities.AgentTurn.WorstCaseUsage
at that price) against the step's, the run's and the monthly limits and is not made when
that does not fit what MaxBudgetUSD leaves (a model the table does not price has no
known worst case: its turns reserve what MaxBudgetUSD leaves); paid tool steps draw on
the same cap. The turn, token, cost and time
(MaxLoopTime, workflow time, checked before each turn and each wave of tool calls) limits
end the loop with an *AgentLimitError, or with AnswerOnLimit one last turn without tools,
as long as the money left pays for. Without tools it is one gateflow.agent
step, as ctx.Agent.

A failed step's route (OnFailure, and OnTimeout for a step that timed out, recorded
timed_out with the timeout's type) says what happens next: Continue lets it fail, Fallback
runs another step of its kind whose result is the step's, Goto sends the failure back to a
label, which runs its body again at most MaxVisits times:

	err := ctx.Label("build", func(c *flow.Context) error {
		_, err := c.Shell("build", activities.Shell{Command: "make"}, flow.OnFailure(flow.Goto("build")))
		return err
	}, flow.MaxVisits(3))

Workers spread Temporal's retries of failed steps by a deterministic ±20% jitter of the
retry policy's backoff, seeded by the run and the step. An attempt whose worker was lost
(killed, crashed or cut off: a heartbeat timeout) does not use up one of the step's
attempts: a shell or HTTP step allowed three attempts fails after three real failures
however many workers it lost on the way (up to 10 losses; the Worker schedules them with
that much room in Temporal's retry policy and its workers count the real failures), and a
cost-bearing agent step is made again by the run. A custom activity's losses count as
Temporal counts them (its StartToClose timeout looks like a lost worker).

OnError steps run once when the run fails, Always steps once when it ends, whatever the
outcome (after a cancellation too). ctx.OnStepError(fn) runs fn after each failed step,
allowed failures included, before the handler goes on; ctx.ClearErrorHandlers removes it.

Step options (StepTimeout, QueueTimeout, HeartbeatTimeout, Retry, AllowFailure, CostLimit,
OnFailure, OnTimeout) go after a built-in step's spec, or on a derived context for typed
steps: ctx.With(opts...). Step
checks a custom activity function's arguments and result before dispatch. A custom result
that implements activities.CostReporter or activities.TokenReporter is charged to the run.

Cache(key, ttl) reuses a step's result: a result stored under the key less than ttl ago
(in the worker's blob store, WorkerOptions.BlobURL) is returned without running the step,
which is recorded completed and cached with the entry's age ("cached 3m ago") and costs
nothing; a miss runs the step and stores its result. Keys are per flow; SharedCache shares
one across flows. The lookup is an activity, so a replay sees the same decision. A worker
without a blob store fails a step with Cache before dispatching it.

ctx.MCP(name, activities.MCPCall{Server, Tool, Args}) calls a tool of one of the worker's
MCP servers (WorkerOptions.MCPServers, package mcptools) as a step of kind mcp; the
tool's answer is recorded in the history, so a replay never asks the server. A tool that
answers with an error fails the step with its text, unless the step allows failure.

# Parallel steps, branches, fan-out and children

ctx.Parallel runs steps at once (FailFast cancels the rest at the first failure, WaitAll
runs them all) and returns their results in input order; ResultAs reads a custom step's
result; BranchStep and ChildStep put a branch or a child run into the group.

	review := flow.Async(ctx, "review", func(c *flow.Context) (approval.Outcome, error) { ... })
	i, out, err := flow.Race(ctx, "first", fastPath, slowPath)
	results, err := flow.ForEach(ctx, "regions", regions, deploy, flow.ForEachOptions{MaxParallel: 2})
	outputs, err := flow.ForEachChild(ctx, "shards", Shard, inputs, flow.ForEachOptions{OnItemFail: flow.Continue})

A branch (Async, ctx.Go) runs any steps, children and waits concurrently with the rest of
the handler, on Temporal's deterministic coroutines; its steps are recorded under its name
("review/approve"). Race returns the first branch to finish and cancels the others.
ForEach runs a branch per item, ForEachChild a child run per item (IDs
"<run>/<name>/<item>"), both at most MaxParallel at once, results in input order; a failed
item halts the fan-out (the items in flight are cancelled), or with Continue the others go
on, or with SkipDependents the items that depend on it (DependsOn) are skipped. ctx.Items
lists a fan-out's items through an items.Provider registered on the worker. Past 1,000 items
ForEachChild starts its children through a fan-out runner that continues as new every
1,000 items, so no history grows with the number of items (Temporal's limits are 51,200
events and 50 MB per history); the runner carries every item's input and output across
continue-as-new and returns the outputs to the parent, so keep them small (a few hundred
bytes each).

Child runs another defined flow as a Temporal child workflow: its steps, status, cost and
tokens show under the parent's step, its spend counts for the parent, it gets the parent's
guards and what is left of its budget, and cancelling the parent cancels it unless the step
is Detached. ChildTags sends it to workers with those tags; a child of a flow no worker
serves fails its step at once; ctx.ChildByName starts a child by its workflow name.
ctx.Send signals another run or a keyed mailbox, ctx.CancelRun cancels another run; both
are steps of the sending run.

# People

	d, err := ctx.Approval("ship", approval.Request{Approvers: []string{"alice", "group:release"}, Required: 1})
	notes, err := flow.Input[Notes](ctx, "release-notes", signals.InputRequest{Prompt: "Release notes"})
	ev, err := flow.WaitSignal[Deployed](ctx, "deploy-done", in.Version, time.Hour)

An approval gate counts votes sent as the Update gateflow.approval; its Validator refuses
votes that may not count, and a refused vote leaves no trace in history. Votes that arrive
before the run reaches the gate are kept and checked when it opens; group membership is
read once and recorded. A rejection is an error the handler may handle (errors.Is with
approval.ErrRejected); returned, it ends the run as rejected. Input asks for an answer of
type T checked against a JSON Schema and T; WaitSignal waits for a signal, buffered before
the wait and deduplicated by ID, keyed signals reaching every run waiting on the key. While
it waits the run's status says for what (awaiting_approval, awaiting_input,
waiting_signal) and runs.State.Waiting and the FlowWaiting search attribute list each Wait,
whose Command is the flowctl command that answers it. A run that waits for several things
at once (in branches) shows the first by a fixed precedence, whichever began or ended
last: paused > awaiting_approval > awaiting_input > awaiting_gate > waiting_signal >
budget_paused > waiting_capacity > sleeping > pending, else running. Client.Approvals lists
every run whose FlowWaiting has an approval:GATE, whatever its status.

# Polled gates

	res, err := ctx.Gate("ci-green", gates.Request{Type: "http", PollInterval: 30 * time.Second,
		Params: gates.HTTPParams{URL: ciURL, Field: "status", Equals: "success", RejectValues: []any{"failure"}},
		Timeout: 2 * time.Hour, OnTimeout: gates.RejectOnTimeout, AllowManual: true})

A polled gate waits until a gates.Resolver (package gates; "http" and "command" are built in,
WorkerOptions.GateResolvers adds yours) approves or rejects it. Each poll is one activity,
gateflow.gate.poll, and between polls the run sleeps on a durable timer, with the status
awaiting_gate and the wait "gate:NAME/TYPE". A rejection is a *gates.RejectedError (it ends
the run as rejected when returned), a deadline does what OnTimeout says (fail, approve,
reject, continue), and with AllowManual `flowctl approve` or `flowctl reject --reason`
decides the gate early, recording who did. A type the worker has no resolver for fails the
step at once, naming the types it has; declare a flow's types with UsesGates and a worker
without one of them refuses to start.

# Quality gates and decisions

	rec, err := ctx.QualityGate("review-quality", review, quality.Gate{Threshold: 80, Field: "review.score"})
	choice, err := flow.Decide[Verdict](ctx, "ship-or-hold", flow.DecisionRequest{
		Options: []string{"ship", "hold"}, Prompt: "Ship " + in.Version + "?", Model: "gpt-4o-mini"})

A quality gate reads a 0–100 score at a dotted path of a step's output (an agent's JSON,
raw JSON, a map or a struct) and passes at or above the threshold; below it fails the step
with ErrorQualityGate, or with quality.Continue records an allowed failure and goes on. It
runs in the workflow, costs nothing and records the score and threshold
(runs.Step.Quality). Decide returns one of a list of options: an agent picks it (an agent
step whose ResponseSchema enumerates the options, so an answer outside them is refused
with activities.AgentSchemaErrorType and asked again, and which costs money like any agent
step), or with AssignTo a person answers it as an input (`flowctl input RUN NAME --data
'"ship"'`); runs.Step.Decision keeps the options, the choice, the reason and who decided.

# Budgets

Money is decimal. A run's cap resolves from the start options, then the flow, then the
worker; a cost-bearing step reserves its limit first and is not dispatched when spend plus
the reservation would pass the cap. Crossing the cap ends the run budget_exceeded (children
cancelled, OnError steps run) or, with the pause policy, waits in budget_paused for
`flowctl budget raise`. Every run's cost is charged to the month's ledgers (overall and per
workflow) with or without quotas. Monthly quotas (WorkerOptions.Quotas) admit a new run only
when its cap fits what the month has not spent or reserved (see flowclient.Client.Start).

Cost-bearing steps (agents, decisions, any step with a CostLimit) are retried by the run,
not by Temporal: each attempt is one activity (ID, ID@2, ID@3 ...) whose cost and tokens are
charged as soon as it ends, paid or not, and listed in runs.Step.Attempts; the limit is
reserved again before the next attempt, so an attempt the cap cannot pay for is not made;
the backoff between attempts is a durable timer with a deterministic ±20% jitter. A
provider's rate limit (429 with Retry-After) is waited out in waiting_capacity without
using an attempt, for at most the step's timeout. A Parallel wave whose limits do not fit
together records each of its steps as refused; a step that cost more than its own limit is
flagged (runs.Step.Overshoot; "$0.45 > $0.25 limit" in flowctl show and the Web UI).

# Errors

A step's error is a *StepError naming the step; errors.As and errors.Is see through it to
the Temporal error, a *GuardError or an approval error. A step allowed to fail
(AllowFailure) returns an *AllowedFailure around it; a handler that returns only allowed
failures ends the run warning. What a handler returns with its error is kept
(runs.State.Output, runs.Description.Output). Runs and steps fail with
Temporal application errors of stable types (ErrorType: ErrorBudgetExceeded,
ErrorRejected, ErrorShellExit, ...); branch on them with ErrorType.Is. Permanent marks a
handler's error as final so the run is not attempted again. Client calls refuse bad input
with typed errors of package flowclient (*InputError, *UnknownWorkflowError,
*RunExistsError, *RefusedError, *RunNotFoundError) before anything starts.

# Workers and clients

	w := flow.NewWorker(temporalClient, flow.WorkerOptions{TaskQueue: "gateflow"}, examples.All()...)
	c := flowclient.New(temporalClient, flowclient.Options{TaskQueue: "gateflow"})
	run, err := c.Start(ctx, "release", input, core.StartOptions{IdempotencyKey: "v1.2.3"})
	typed, err := flowclient.StartFlow(ctx, c, Release, ReleaseInput{...}, core.StartOptions{})

A Worker serves flows and gateflow's built-in activities on a task queue and publishes
their catalog, so clients list them and refuse unknown names and ill-shaped input before
anything starts. RegisterWorkflows and RegisterActivities do the same registration on any
Temporal registry (a test environment, a replayer). WorkerOptions.Services declare the
services steps call (package service), WorkerOptions.ItemProviders the lists fan-outs run
over (package items); package quality holds a quality gate's settings. A flowclient.Client starts runs (IDs, idempotency keys, labels,
priority, worker tags, concurrency, delays, caps), inspects them (Describe, List, Wait,
History), and sends people's decisions (Vote, Answer, Signal, RaiseBudget), cancellations
and pauses; flowctl is built on it (see package flowclient). Events go to the worker's sinks
(package events).

# Testing

Package testsuite runs flows in virtual time with mocked steps and scripted people
(testsuite.NewEnv, testsuite.Run), replays recorded histories (testsuite.Replay) and starts
an embedded Temporal server for integration tests (testsuite/server).

# Talking to runs without Go

Package flowclient's documentation lists the few names other tools send: the Updates
gateflow.approval, gateflow.input, gateflow.budget and gateflow.pause, the Signal
gateflow.signal, the Query gateflow.state and the Memo key of a closed run's state, with
their JSON payloads (internal/protocol holds them). Everything else on the wire (entity
workflows, start options, parent and child messages) is internal.

# Where things are

The files of this package say which side runs them: authoring (define.go, context.go,
options.go, steps.go, parallel.go, child.go, approval.go, gate.go, input.go, signal.go, timers.go,
wait.go, errors.go, state.go, guards.go, schedule.go), the run wrapper that
turns a handler into a workflow (run_*.go: run_handler.go is the table of contents, one
part per concern in run_budget.go, run_people.go, run_gate.go, run_children.go, run_events.go and
run_permits.go; every step primitive records its step through one lifecycle, step_lifecycle.go:
begin, guards, plan, end and publish), the worker (worker.go, register.go, worker_gates.go, worker_schedules.go)
and the worker's own starts (worker_starts.go, planned by internal/startplan as the client
plans its starts). What flow and flowclient both speak (catalog entries, start options,
their errors) is package core; the entity workflows (catalog, ledger, mailbox, semaphore,
control) live in internal/entity, the wire names and payloads in internal/protocol.
*/
package flow
