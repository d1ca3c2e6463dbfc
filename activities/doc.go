// Package activities holds gateflow's built-in step activities and their input and result
// types: Shell runs a command in a real process.
//
// Each built-in step is a plain Temporal activity. Workflow code reaches them through
// flow.Context (ctx.Shell); a worker created with flow.NewWorker registers them. They can
// also be registered and called like any other activity, under the names in this package
// (ShellActivity).
//
// Long steps heartbeat, so a crashed worker is noticed within the step's heartbeat timeout
// and the step is retried elsewhere; a cancelled step kills its whole process group. The
// heartbeat carries an artifacts.LiveOutput: the last lines of a shell step's stdout and stderr, an
// agent step's progress, which flowclient.Client.Describe returns in runs.Description.Live (and
// flowctl watch and flowctl logs print).
//
// Every step has a stable identity for the services it calls (Identity): a shell step gets
// GATEFLOW_STEP, GATEFLOW_ATTEMPT and GATEFLOW_IDEMPOTENCY_KEY in its environment, an HTTP
// step sends the key in an Idempotency-Key header (HTTP.IdempotencyHeader). The key is the
// same for every attempt of the step and differs between steps and runs (IdempotencyKey
// says what renews it), so a service can deduplicate the at-least-once calls.
//
// A shell step passes files to later steps as artifacts: Shell.Outputs are uploaded to the
// worker's blob store after the command (ShellResult.Artifacts lists them), Shell.Inputs
// are placed in the step's work directory before it, on whichever worker runs it. The run
// resolves each input's blob key from its own step records before it dispatches the step
// (runs.Step.Artifacts); the activity finds the store in its context
// (WithArtifactStore, which flow.NewWorker sets up from WorkerOptions.BlobURL).
//
// MCPActivities call the tools of MCP servers (package mcptools) for MCP steps and agent
// tools: MCPCatalogActivity lists their tools, MCPCallActivity calls one (a tool that
// answers with an error is a result with IsError set, not a Go error), MCPReadActivity
// reads a resource; the worker registers them over its pool when it declares servers.
//
// A shell step's result carries at most MaxOutputBytes of its stdout (the head) and of its
// stderr (the tail), with the byte counts of both, however much the command prints, so the
// workflow that decodes it never handles a big payload. With a blob store
// (WithOutputStore, set up from the same BlobURL) a longer stream is streamed whole to the
// store as the command writes it, up to OutputLimit, and the result refers to it
// (ShellResult.StdoutBlob, StderrBlob); no output is ever held in memory as a whole.
//
// An agent step (Agent, AgentActivity) is one model call; an agent loop's turn
// (AgentTurn, AgentTurnActivity, run by flow.Context.AgentLoop) is one model call of a
// conversation with tools, whose answer may call them. Both are paid alike (agent.go): the
// worst case is refused before the provider is called when it exceeds the budget, the
// answer is priced (the provider's reported cost, else the price table) and a final answer
// is checked against the ResponseSchema.
package activities
