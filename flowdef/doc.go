/*
Package flowdef is gateflow's declarative flow format: a flow written as a YAML (or JSON)
file instead of Go, its parser, its static validation and the JSON Schema editors use to
complete and check it. It does not run anything: the interpreter (a Temporal workflow)
executes a validated Definition, and `flowctl validate`, the worker at load time and the
starter before a run all call the same Validate. The package is pure Go with no Temporal
dependency.

# A full example

	# yaml-language-server: $schema=https://gateflow.dev/schemas/flowdef.json
	name: code-review              # lower case, digits, '.', '_', '-'
	version: "3"
	description: Review every changed file of a pull request.
	category: review
	inputs:                        # JSON Schema of the run's input
	  type: object
	  required: [repo, pr, files]
	  properties:
	    repo: {type: string}
	    pr: {type: integer}
	    files: {type: array, items: {type: string}}
	outputs: {type: object}        # JSON Schema of the run's output
	vars: {attempts: 0}            # initial variables (vars.attempts)
	limits:
	  wall_time: 2h                # Go durations, plus d for days
	  steps: 500
	  tokens: 400000
	  max_cost_usd: "5.00"         # decimal strings, never floats
	  budget_policy: pause         # stop (default) or pause
	  budget_pause: 4h             # how long a paused run waits for a raise (default 24h)
	  depth: 3
	  fan_out: 8
	concurrency: {key: "${{ inputs.repo }}", max_runs: 1, on_overflow: replace}  # per repo
	priority: 5
	labels: {team: platform}
	worker_tags: [linux]
	schedules: [{id: nightly, cron: "0 3 * * *", timezone: Europe/Paris, input: {repo: main, files: []}}]
	triggers:
	  - {on: completed, flow: build}          # the ended run's output is the input
	  - {on: failed, flow: deploy, if: "output.env == 'prod'", input: {repo: "${{ output.repo }}", files: []}}
	  - {on: signal, signal: review-requested}
	steps:
	  - id: checkout
	    uses: shell
	    with: {command: "git clone ${{ inputs.repo }} work"}
	    timeout: 5m
	    retry: {max_attempts: 3, backoff: 10s}
	  - id: reviews
	    foreach:
	      over: inputs.files                  # or provider: <registered item provider>
	      as: file
	      max_parallel: 4
	      on_item_fail: continue
	      steps:                              # or call: <flow>, one child run per item
	        - id: review_one
	          uses: agent
	          with: {prompt: "Review ${{ file }}"}
	          cost_limit: "0.50"
	          output_schema: {type: object, required: [score]}
	  - id: summary
	    uses: agent
	    with: {prompt: "Summarise ${{ steps.reviews.output }}"}
	  - id: quality
	    gate: {type: quality, source: summary, threshold: 80, on_fail: continue}
	  - id: approve
	    gate: {type: approval, prompt: "Merge PR ${{ inputs.pr }}?", approvers: [leads]}
	    timeout: 24h
	    on_timeout: goto give_up
	  - id: done
	    finish: {status: completed, output: {summary: "${{ steps.summary.output }}"}}
	  - id: give_up
	    finish: {status: failed, message: nobody approved}
	on_error:
	  - send: {mailbox: reviews, signal: review-failed, payload: {repo: "${{ inputs.repo }}"}}
	always:
	  - {id: cleanup, uses: shell, with: {command: rm -rf work}}

# Nodes

A node is a mapping; its kind is the one keyword it carries:

  - step (`uses:`): runs an action, shell, http, agent or one registered on the worker,
    with its params in `with:` (strings are templates); `service:` names the service it
    calls (flow.UseService: the service's shared rate limit and circuit breaker). An
    http step's `with.idempotency_header` renames its Idempotency-Key header.
    `cache: {key: "build-${{ inputs.version }}", ttl: 10m, shared: false}` reuses the
    result stored under the key (a template) less than ttl ago without running the step
    (flow.Cache; keys are per flow unless shared; the worker needs a blob store).
    A shell step's `with.outputs: [dist, "reports/*.xml"]` keeps files of its work
    directory as artifacts (in the worker's blob store), and `with.inputs: [{step: build,
    name: dist/app.txt, path: in/app.txt}]` places artifacts of earlier shell steps in its
    work directory before it runs (activities.Shell Outputs and Inputs; the input's step
    must be a shell node with outputs; the closest earlier run of it wins).
    An agent step's `with:` takes prompt, system, model, provider, max_tokens and
    max_budget_usd, and the agent loop's keys (validate_agent.go): `tools:` (each
    `action: <registered action>` with an optional `parameters:` JSON Schema, or
    `shell: {command, dir, env, timeout}` or `http: {method, url, headers, timeout,
    expect_status}` with `params: [{name, description, required}]`, or `mcp: <server>`
    with `tool: <its tool>` (validate_agent_mcp.go; the server must be one the workers
    declare, when they are known), or `flow: <a definition or Go flow>` with an optional
    `parameters:`, plus name, description and fatal), max_turns, max_loop_tokens,
    `max_loop_time: 10m` (a duration longer than zero), `messages: [{role:
    user|assistant, text}]`, `context:` (a string or strings), `reads:` (values, or MCP
    resources `{mcp: <server>, uri: <URI>}`),
    `think: true` (a JSON answer, no tools) and `on_limit: answer|fail`. Any other key,
    a tool on think, a tool name used twice and an unregistered action are errors.
  - set: assigns variables, `set: {count: "${{ size(inputs.files) }}"}`.
  - check: asserts a CEL condition, failing the node with `message:` otherwise.
  - switch: compares a CEL value with each of `cases: [{value, steps}]`, else `default:`.
  - if (`if:` with `then:`, optional `else:`): a two-way branch. A lone `if:` on any
    other node is a guard that skips it.
  - loop: `while:` (checked before), `until:` (checked after: the body runs at least
    once) or `over:` a list (`item` in the body, renamed by `as:`); `max_iterations`
    bounds while and until loops.
  - parallel: a list of branch nodes, with `fail_fast` and `min_success`.
  - foreach: per item of `over:` (a list expression) or of `provider:` (a registered item
    provider with `params:`), either one child run of `call:` with `with:` as its input or
    the inline `steps:`; `max_parallel`, `ordered` (an item starts after the items its
    depends_on ids name; a cycle fails the node), `on_item_fail: fail|continue|skip_dependents`.
  - call: runs another definition or a Go flow as a child with `with:` as input;
    `detached: true` starts it without waiting.
  - gate: waits. `type: approval` (people, as approval.Request: `prompt`, `approvers`,
    `required` (the quorum of distinct approvals, default 1) and `on_timeout:
    reject|approve|fail`, what the node's `timeout` does: reject, the default, lets the
    node's on_timeout route it; approve closes the gate approved by nobody; fail fails
    the run whatever the node says), `input` (an answer checked by `schema`, from
    `approvers`), `signal` (a named signal, optionally `key`ed), `poll` (a `resolver` type
    such as http, command or a registered one, with `params`, `poll_interval`,
    `allow_manual`) or `quality` (the score of step `source` against `threshold`,
    `on_fail: fail|continue`). Each type takes only its own fields. `approvers` entries
    are user names, "group:<name>" or templates rendered when the gate opens (one that is
    exactly one ${{ expr }} giving a list adds each element).
  - sleep: a duration.
  - send: a signal to another run (`run:` id) or to a `mailbox:`, with `key` and `payload`.
  - finish: ends the run with `status` (completed, failed, cancelled), `output`, `message`.

Every node may carry `id`, `name`, `description`, `if`, `retry` (`max_attempts`,
`backoff`, `max_backoff`, `factor`), `timeout`, `on_error` and `on_timeout` (`fail`,
`continue` or `goto <id>`), `cost_limit` (USD) and `output_schema` (JSON Schema).

# Expressions

Conditions (`if`, `check`, `switch`, `while`, `until`, `over`) are CEL expressions over
recorded values only, so they are deterministic on replay: `inputs`, `vars`,
`steps.<id>.output`, `item` (inside foreach and loops over a list) and `run`. Strings
elsewhere interpolate `${{ expr }}`. A step is visible to an expression only once it has
run on every path leading there: an earlier node in document order, not inside a branch
that may have been skipped (a node inside then but not else, inside a while loop or a
foreach body), while both branches of an if with else, every case of a switch with
default, every branch of a parallel without min_success and the body of an until loop
count. on_error and always see every id of the body (test with has()).

Validate checks expressions through the Expressions interface; the default, CEL, parses
and type-checks each one with package flowdef/expr in the environment of its Scope.

# Parsing and validation

Parse reads one file strictly (unknown fields, duplicate keys, wrong types, nodes with no
or two kinds are errors; a file over MaxFileSize, aliases expanding beyond MaxAliasNodes
or MaxAliasBytes, and a canonical JSON over MaxFileSize are refused before decoding) and records a Pos (file, line, column) on every node and, in
Fields, on every value. Validate then checks the definition against a Registry (the
worker's actions, fallback, item providers, gate resolvers, Go flows and a loader of
sub-definitions): see Validate for the list of rules. Both collect every problem in one
pass into a *ValidationError whose Error prints one per line:

	review.yaml:12:11: step 'post': no registered action 'post-comment' (hint: register an action named post-comment on the worker (flow.Worker.RegisterActivity) or add a fallback action)

Check does both. Calls (call and foreach call) are followed into sub-definitions: each is
validated once per Validate, its errors prefixed "in sub-flow 'name': "; a cycle or a
chain of more than MaxDepth definitions is an error.

Hash is the sha256 of a definition's canonical content (sorted-key JSON): a run is
pinned to the exact definition it started with.

JSONSchema is the format's own JSON Schema (schema.json in this directory).
*/
package flowdef
