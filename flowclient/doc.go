/*
Package flowclient starts, watches and decides gateflow runs: it is the client side of
package flow, which defines the flows and serves them on workers. It wraps a Temporal
client (go.temporal.io/sdk/client); flowctl is built on it.

# Connecting

	tc, err := client.Dial(client.Options{HostPort: "localhost:7233"})
	if err != nil {
		return err
	}
	c := flowclient.New(tc, flowclient.Options{TaskQueue: "gateflow"})

Options name the task queue whose catalog the client reads (default
core.DefaultTaskQueue), the identity recorded on runs and decisions (default FLOW_USER,
else the OS user), and how decisions are proven: Key signs them (auth.Key), IdentityToken
sends an OIDC token instead, for runs whose worker verifies them (flow.WorkerOptions.Auth).
Clients and workers of a namespace that keep big payloads in a blob store dial their
Temporal clients with WithPayloadStore.

# Starting runs

	run, err := c.Start(ctx, "release", ReleaseInput{Version: "v1.2.3"},
		core.StartOptions{IdempotencyKey: "v1.2.3", Labels: map[string]string{"team": "web"}})
	typed, err := flowclient.StartFlow(ctx, c, Release, ReleaseInput{...}, core.StartOptions{})
	out, err := typed.Result(ctx)

Start checks, before anything starts, that a worker of the task queue serves the flow
(Workflows reads the catalog the workers publish; *core.UnknownWorkflowError, core.ErrNoCatalog),
the input against the flow's input type and the options (*core.InputError), the monthly quotas
(*budget.QuotaError), a held concurrency key and an ID in use (*RunExistsError), and the
flow's MaxRuns (*MaxRunsError). With an IdempotencyKey a second start returns the first run
(core.Run.Existing). Plan runs a flow with every step stubbed and returns the steps it would run.
SignalStart starts a flow by its signal (flow.OnSignal), RestartOnce starts a once flow
(flow.Once) again.

# Watching runs

	d, err := c.Describe(ctx, run.ID) // the run's runs.Description: status, steps, cost, waits
	d, err = c.Wait(ctx, run.ID)      // the same once the run has ended
	list, err := c.List(ctx, flowclient.ListOptions{Status: runs.StatusAwaitingApproval})

Describe reads a running run's state by Query and a closed one's from its Memo, so closed
runs are read without a worker. List and ListPage filter runs by flow, status, label,
creator and what they wait for (the FlowWaiting search attribute); Approvals lists the open
approval gates; History returns a run's Temporal history. A missing run is a
*RunNotFoundError.

# Deciding

	res, err := c.Vote(ctx, run.ID, approval.Vote{Gate: "ship", Kind: approval.Approve, Comment: "ok"})
	ans, err := c.Answer(ctx, flowclient.AnswerRequest{Run: run.ID, Name: "release-notes", Data: notes})
	env, err := c.Signal(ctx, run.ID, signals.Envelope{Name: "deploy-done", Key: "v1.2.3"})

Votes and answers are Temporal Updates: the run's Validator refuses what may not count (a
voter not allowed, an answer that does not fit the schema) with the reason, as a
*RefusedError, and a refused decision leaves no trace in the run's history. A decision the
run has not answered within Options.DecisionTimeout (its worker is down) is asked about on
the server: a *PendingError (matching core.ErrNotValidated) when the server holds it (it is
checked, and counts if valid, when a worker is back, unless the server restarts first), a
*NotDeliveredError when the server has no trace of it (nothing will happen). Signals are delivered once per envelope ID; SignalKey sends a keyed
signal to the runs waiting on its key on every task queue and says which queues it went to.

# Budget, pauses, cancellation

	cap, err := c.RaiseBudget(ctx, flowclient.BudgetRequest{Run: run.ID, To: decimal.RequireFromString("5.00")})
	err = c.PauseRun(ctx, flowclient.PauseRequest{Run: run.ID, Reason: "incident"})
	err = c.Pause(ctx, flowclient.PauseRequest{Workflow: "release", Reason: "freeze"})
	err = c.Cancel(ctx, flowclient.CancelRequest{Run: run.ID, Reason: "superseded"})

RaiseBudget raises a run's money cap (a run paused in budget_paused goes on); MonthlySpend
lists the month's spend per workflow. PauseRun pauses one run (it finishes the steps in
flight and starts no new one until ResumeRun); Pause holds new runs of a workflow type in
pending until Resume (Paused lists the paused types; core.Run.Held says a start was held).
Cancel cancels a run with a reason its state keeps.

# Schedules, services, catalog

Schedules lists the Temporal Schedules the workers created (flow.Schedule) and
ControlSchedule triggers, pauses or unpauses one (TriggerSchedule, PauseSchedule,
UnpauseSchedule). Services lists the services the workers declared (package service) with
each worker's limits and breaker state. Workflows returns the task queue's core.Catalog: its
flows (core.WorkflowInfo) and its workers' registries (core.RegistryInfo), which Registry turns
into the flowdef.Registry declarative definitions are validated against.

# Talking to runs without Go

The messages a run understands, for tools that talk to runs without Go (the Temporal CLI,
another SDK, the Web UI's "Send an Update" and "Send a Signal"); Client sends the same
messages. Payloads are JSON.

	temporal workflow update execute --workflow-id RUN --name gateflow.approval \
	    --input '{"gate":"ship","kind":"approve","by":"alice","comment":"ok"}'
	temporal workflow update execute --workflow-id RUN --name gateflow.input \
	    --input '{"name":"release-notes","data":{"text":"..."},"by":"alice"}'
	temporal workflow signal --workflow-id RUN --name gateflow.signal \
	    --input '{"name":"deploy-done","key":"v1.2.3","id":"d-1","payload":{"ok":true},"sender":"ci"}'
	temporal workflow update execute --workflow-id RUN --name gateflow.budget --input '{"to":"5.00","by":"alice"}'
	temporal workflow update execute --workflow-id RUN --name gateflow.pause --input '{"action":"pause","by":"alice"}'
	temporal workflow query --workflow-id RUN --type gateflow.state

The Update gateflow.approval carries a vote {"gate", "kind": "approve"|"reject"|
"request_changes", "by", "comment"} (approval.Vote) and returns an approval.VoteResult; a
Signal of the same name carries the same vote. gateflow.input answers a
human input request {"name", "data", "by"} and returns the accepted signals.InputAnswer.
gateflow.signal carries a signals.Envelope {name, key, id, payload, sender}: signals that
arrive before the run waits for them are kept, an ID seen before is delivered once.
gateflow.budget raises a run's cap {"to": "5.00", "by"} and returns the new budget.Cap.
gateflow.pause pauses one run {"action": "pause", "by", "reason"} or resumes it {"action":
"resume", "by"} and returns the run's status. The Query gateflow.state returns the run's
runs.State, which a closed run keeps in its Memo under the key gateflow.state.

An Update's Validator refuses what may not count (a vote from someone not allowed, an
answer that does not fit the schema, a cap below what is spent) with the reason, and a
refused Update leaves no trace in the run's history. A vote sent as a Signal cannot be
refused that way: the run records the refusal in runs.State.Refused instead.
*/
package flowclient
