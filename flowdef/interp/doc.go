/*
Package interp runs declarative flows (package flowdef) on gateflow's own runtime: a
parsed, validated flowdef.Definition becomes a regular flow.Definition whose handler walks
the nodes and calls the same primitives a Go flow calls. There is no second runtime, so a
declarative run looks like a Go run everywhere (flowctl, the Web UI, events, budgets,
guards), its steps named by the nodes' ids.

	def, err := flowdef.Check("review.yaml", data, registry)
	if err != nil { ... }
	live, err := interp.NewLive(def)
	f, err := live.Flow(interp.DefaultModel("gpt-4o-mini"))
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: "gateflow"}, f)
	...
	live.Set(edited) // new runs use edited; runs going on keep their definition

interp.Flow(def) is the shorthand when the definition never changes.

# The envelope

A definition's envelope becomes the flow options a Go flow would use, so a definition
behaves as the equivalent Go flow (Info shows them):

	limits.wall_time, steps, tokens,  flow.WithGuards: MaxWallTime (flowdef.ParseDuration),
	  depth, fan_out                    MaxSteps, MaxTokens, MaxChildDepth, MaxFanOut; a
	                                    limit not written keeps the worker's default, one
	                                    written as 0 means no limit (-1)
	limits.max_cost_usd               flow.MaxCostUSD (budget.ParseUSD)
	limits.budget_policy              flow.OnBudgetExceeded(stop|pause, DefaultBudgetPause)
	concurrency.max_runs, on_overflow flow.MaxRuns(max_runs, default 1; queue|refuse|replace)
	concurrency.key                   flow.MaxRunsPerKey("{field}", ...): each
	                                    ${{ inputs.<field> }} becomes {<field>}
	priority, labels, worker_tags     flow.StartDefaults (priority 1 highest to 5 lowest)
	schedules[].cron, timezone        flow.Schedule("CRON_TZ=<timezone> <cron>")
	schedules[].every                 flow.Schedule("@every <every>")
	schedules[].id                    schedule.ID (without it: named by position)
	schedules[].input                 schedule.Input (overlap: the default, skip)
	triggers on completed|failed      flow.OnRunOf(flow, WhenCompleted|WhenFailed); finished
	  |finished                         is both; triggers on one flow are merged
	triggers[].if, input              flow.TriggerInput(flow, ...) for that flow's triggers
	triggers on signal                flow.OnSignal(signal)
	once: true                        flow.Once({}) (an empty object as the input)

concurrency.key is data, not CEL: only literal text and ${{ inputs.<field> }} references,
so a client (Client.Start, flowctl start by name) renders it from the JSON input it
sends, decides refuse and replace among the live runs of that key at admission, and
hands the key's group to the run; a run started otherwise (a schedule, a call) renders
it itself and queues.

A trigger's `if` (a CEL condition, bare or as one ${{ expr }}) and `input` (a value whose
strings are templates) see `output` (the ended run's output), `outcome` (completed or
failed) and run.workflow (the ended run's flow). The triggers of one flow become one
flow.TriggerInput: for a run that ended, the first trigger matching its end whose if
holds starts the flow, with its input rendered (the output as it is without input);
none: nothing starts. The ended run's worker evaluates them at that run's end, with the
triggered definition as it built it, and records the answer (see flow.TriggerInput), so
replay is exact and an edit applies to runs that end after it; the worker must serve
both flows, as for any trigger.

Fields the runtime cannot honour are refused, by flowdef's Validate and by Flow (an error
at the field's position), never dropped: timezone with every (an interval has no zone),
and `if` or `input` on a trigger on signal (the client starts that run with the signal's
payload, and no worker code runs before it: check the payload in the flow's first
steps). A value flow refuses (a priority out of range, a bad tag, a cron that does not
parse, a flow triggering itself, a once input the inputs schema refuses) is an error at
the field's position too.

# What each node does

  - step: `uses: shell`, `http` and `agent` are ctx.Shell, ctx.HTTP and ctx.Agent with
    `with:` decoded onto activities.Shell (command, dir, env, timeout, outputs, inputs), activities.HTTP
    (method, default GET; url, headers, body, json, timeout, expect_status) and
    activities.Agent (prompt, system, model, default DefaultModel; provider, max_tokens,
    max_budget_usd; output_schema becomes its ResponseSchema). An agent step with a loop
    key (tools, max_turns, max_loop_tokens, max_loop_time, messages, context, reads, think,
    on_limit) is
    ctx.AgentLoop instead (agent.go): `action:` tools are flow.ActivityTool over the
    action's name (parameters: their JSON Schema), `shell:` tools flow.ShellTool with their
    params, `http:` tools flow.HTTPTool with theirs, `mcp:` tools flow.MCPTool (agent_mcp.go),
    `flow:` tools a child run of the flow by name (ChildByName; the schema is `parameters:`,
    the definition's inputs or the Go flow's input schema from the Registry, else any object);
    context, reads (JSON unless a string) and messages are the seed messages after
    the prompt, in that order, and reads of the form {mcp, uri} are AgentLoop.Reads. Either way the output is the final answer: its text (decoded
    when it is a JSON object or array), or its JSON with output_schema or think. Any other name is the
    activity registered under it: flow.Step[json.RawMessage](ctx, id, name, with), the
    rendered `with:` its one argument; with Registry(flowdef.NewStaticRegistry(worker.Registry())) a name the worker
    did not register goes to its fallback action (protocol.FallbackActionActivity with a
    activities.ActionCall{Name, With}) when it has one. Unknown `with:` fields of the built-ins
    are errors.
  - set assigns vars (keys in sorted order), check fails the node with its rendered
    message when its condition is false, if runs then or else, switch the first case
    whose value equals the switch value (compared as JSON) or default.
  - loop: while (before each iteration) and until (after) stop with an error past
    max_iterations; over runs the body once per element, the element under `as` (default
    item) and its position as index; the items of enclosing foreach nodes and loops stay
    visible under their names unless `as` hides one.
  - parallel: one flow.BranchStep per branch node in one ctx.Parallel group named by the
    node's id (fail_fast is flow.FailFast, else flow.WaitAll; min_success lets the node
    succeed with that many branches). Output: branch id → its output.
  - foreach over a list (`over:`) or the items of a registered item provider
    (`provider:`, listed by flow.Context.Items as the step "<id>-items"; params.scope is the scope,
    the other params the filter; each item is a map of id, type, ref, depends_on and its
    context values, named by its id): flow.ForEach (max_parallel, default 1;
    on_item_fail continue is flow.Continue, skip_dependents flow.SkipDependents; ordered is
    flow.ForEachOptions.Ordered with DependsOn from the items' id and depends_on, a cycle
    failing the node before any item starts) running either the inline steps, each item in
    its own copy of vars and step results, or one child run of `call:` per item. Output:
    the items' outputs in order (an inline item's is its last node's output; a failed or
    skipped item's is null). Under continue and skip_dependents the node goes on after
    failed items, and the run, if nothing else fails, ends warning.
  - call: a child run of the flow named (another definition or a Go flow) through
    flow.Context.ChildByName, `with:` as its input; detached starts it in a branch the run never
    waits for and goes on once the child started (output {run_id}), the child outliving
    the run.
  - gate: approval is ctx.Approval (prompt is the message, approvers, timeout), input is
    flow.Input (prompt, schema, approvers as assignees), signal is flow.WaitSignal
    (signal, key; the step is named by the signal), poll is ctx.Gate (resolver, params,
    poll_interval, allow_manual, timeout) and quality is ctx.QualityGate over the output
    of step `source` (threshold, on_fail continue is quality.Continue).
  - sleep is ctx.Sleep, send is flow.Context.Send (signal, run; to a mailbox, the key is the
    mailbox's name unless key is given; the step is named by the signal), finish ends
    the run with its output (completed), a permanent error carrying its message (failed)
    or a cancellation (cancelled).

Every node may carry `if` (false: recorded skipped with ctx.Skip), `timeout`
(flow.StepTimeout, or the wait's own timeout for gates), `retry` (flow.Retry),
`cost_limit` (flow.CostLimit), `output_schema` (checked on the output; an agent's is its
response schema) and `on_error` / `on_timeout`. A failure routed to continue or goto is
recorded as an allowed failure (flow.OnFailure(flow.Continue)), so a run that otherwise
completes ends warning; continue goes on with the next node, and `goto X` jumps to node X
in the innermost enclosing node list that holds it (forwards or backwards). A run may jump
to one node at most MaxVisits times (DefaultMaxVisits); past that the node fails with
"goto X: node X re-entered N times (max N)".

The run's output is the output of the finish node that ended it, or, with no finish, its
vars; either must match the definition's `outputs` schema. The input must match
`inputs` (also published as the catalog's input schema, so clients check it before a
start). `on_error` nodes run when the body failed (not when it was cancelled), every one
even when one fails; `always` nodes run last whatever happened; after a cancellation only
its shell, http and agent steps run, handed to ctx.Always.

A node's failure is a *NodeError with its id, kind and position ("review.yaml:12:5: node
post (step): step post: exit code 1"); errors.As and errors.Is see through it to the flow
error, so a rejection, a budget stop or a guard ends the run as it would a Go flow.

# Expressions

Conditions and `${{ }}` templates are evaluated with package flowdef/expr over recorded
values only: the run's input, vars, the results of the nodes that ran (steps.<id>.output,
.status — succeeded, failed, timed_out, cancelled or skipped —, .error, .cost_usd), item and index,
and run (id, workflow, attempt, and started_at from the run's state). A string that is
exactly one `${{ expr }}` keeps the expression's type. Each expression is compiled once
per run. Step outputs: a shell step's stdout (trailing newlines trimmed; decoded when it
is a JSON object or array), an http step's JSON body or its text, an agent's JSON answer
or its text, an action's decoded result, a gate's decision, answer, payload, poll result
or quality record, a call's child output.

# Pinning

A run uses the exact definition it started with. The handler's first action is a
workflow SideEffect that records the current definition's name, hash (flowdef's Hash)
and canonical JSON; replays read it back, and the handler runs the definition of that
hash: the one the Live was Set with, or, when this process never had it (a restart after
an edit, another worker), the recorded JSON parsed again. Live.Set changes only what new
runs start with. The catalog entry (description, category, version, input schema) is
the one current when Live.Flow was called.

The interpreter is workflow code: no clocks but the run's, no goroutines, map keys
always visited in sorted order.
*/
package interp
