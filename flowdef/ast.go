package flowdef

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Pos is where something was written: the file as given to Parse, and the 1-based line
// and column of its first character. The zero Pos means "nowhere" (a definition built in
// Go rather than parsed).
type Pos struct {
	// File is the name given to Parse (usually the path of the file).
	File string `json:"file,omitempty"`
	// Line is 1-based; 0 means unknown.
	Line int `json:"line,omitempty"`
	// Col is 1-based; 0 means unknown.
	Col int `json:"col,omitempty"`
}

// String reads "file:line:col", dropping what is unknown.
func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.File == "":
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	default:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	}
}

// Fields records where the value of every key of a mapping was written, by key. Every
// struct of the AST that came from a mapping has one, so a validator can point at the
// exact field that is wrong (n.Fields.At("timeout", n.Pos)).
type Fields map[string]Pos

// At is the position of key's value, or def when the key was not written.
func (f Fields) At(key string, def Pos) Pos {
	if p, ok := f[key]; ok {
		return p
	}
	return def
}

// Has reports whether key was written.
func (f Fields) Has(key string) bool { _, ok := f[key]; return ok }

// Schema is a JSON Schema written inline in a definition (YAML or JSON), kept as JSON.
// An empty Schema (no JSON) means "not given" and accepts anything.
type Schema struct {
	// Pos is where the schema starts.
	Pos Pos `json:"-"`
	// JSON is the schema re-encoded as JSON; nil when not given.
	JSON json.RawMessage `json:"-"`
}

// IsZero reports whether no schema was given.
func (s Schema) IsZero() bool { return len(s.JSON) == 0 }

// Definition is one parsed flow file: the envelope (name, inputs, limits, starts...) and
// three node lists, Steps (the body), OnError (run when the body fails) and Always (run
// last whatever happened). Parse builds it; Validate checks it against a worker's
// registries. A Definition is data: it does nothing by itself.
type Definition struct {
	// Pos is the start of the document; Fields where each top-level key's value is.
	Pos    Pos
	Fields Fields

	// Name identifies the flow (lower case letters, digits, '.', '_' and '-'); it is the
	// name `call:` and triggers use.
	Name string `yaml:"name"`
	// Version is free text shown in listings ("1", "2024-06-01").
	Version string `yaml:"version"`
	// Description is shown in listings and the UI.
	Description string `yaml:"description"`
	// Category groups flows in listings.
	Category string `yaml:"category"`
	// Inputs is the JSON Schema of the run's input; its top-level properties are the names
	// visible as inputs.<name>.
	Inputs Schema `yaml:"inputs"`
	// Outputs is the JSON Schema the run's output must satisfy.
	Outputs Schema `yaml:"outputs"`
	// Vars are the initial run variables (vars.<name>); set nodes change them.
	Vars map[string]any `yaml:"vars"`
	// Limits bound the run (time, steps, tokens, money, depth, fan-out).
	Limits *Limits `yaml:"limits"`
	// Concurrency bounds how many runs share a key.
	Concurrency *Concurrency `yaml:"concurrency"`
	// Priority is the runs' Temporal priority: 1 (highest) to 5 (lowest); 0 means 3.
	Priority int `yaml:"priority"`
	// Labels are free key/value pairs, searchable.
	Labels map[string]string `yaml:"labels"`
	// WorkerTags restrict which workers may run the flow.
	WorkerTags []string `yaml:"worker_tags"`
	// Once starts one run when the definition is first loaded.
	Once bool `yaml:"once"`
	// Schedules start runs on a cron or an interval.
	Schedules []*Schedule `yaml:"schedules"`
	// Triggers start runs when another flow's run ends or a named signal arrives.
	Triggers []*Trigger `yaml:"triggers"`
	// Steps is the body, run in order.
	Steps []*Node `yaml:"steps"`
	// OnError runs when the body fails (after node-level on_error handling gave up).
	OnError []*Node `yaml:"on_error"`
	// Always runs last, whether the body succeeded, failed or was cancelled.
	Always []*Node `yaml:"always"`

	canonical []byte
}

// Limits bound a run. Durations are Go durations with an optional day unit ("90s",
// "2h30m", "1d"); money is a decimal string in USD ("2.50").
type Limits struct {
	Pos    Pos
	Fields Fields
	// WallTime bounds the run's duration from start to end.
	WallTime string `yaml:"wall_time"`
	// Steps bounds how many nodes the run may execute (loop iterations count).
	Steps int `yaml:"steps"`
	// Tokens bounds the LLM tokens of all agent steps.
	Tokens int `yaml:"tokens"`
	// MaxCostUSD caps the run's spend.
	MaxCostUSD string `yaml:"max_cost_usd"`
	// BudgetPolicy is what going over MaxCostUSD does: stop (default) or pause.
	BudgetPolicy string `yaml:"budget_policy"`
	// BudgetPause is how long a run with budget_policy pause waits for a higher cap
	// (default flow.DefaultBudgetPause, 24h).
	BudgetPause string `yaml:"budget_pause"`
	// Depth bounds nesting of child runs (call, foreach) at run time.
	Depth int `yaml:"depth"`
	// FanOut bounds the child runs or branches running at once.
	FanOut int `yaml:"fan_out"`
}

// Concurrency bounds the live runs of the flow (flow.MaxRuns).
type Concurrency struct {
	Pos    Pos
	Fields Fields
	// Key limits MaxRuns per key: literal text and ${{ inputs.<field> }} references (see
	// KeyTemplate); empty: MaxRuns counts all the flow's runs.
	Key string `yaml:"key"`
	// MaxRuns is how many runs of the flow may be live at once (default 1).
	MaxRuns int `yaml:"max_runs"`
	// OnOverflow is what a run over the limit does: queue (default), refuse or replace
	// (cancel the oldest).
	OnOverflow string `yaml:"on_overflow"`
}

// Schedule starts runs on a cron expression or a fixed interval, with a fixed input.
type Schedule struct {
	Pos    Pos
	Fields Fields
	// ID names the schedule (schedule.ID): 1-63 lower-case letters, digits and _.-
	// starting with a letter, unique in the flow; empty: it is named by its position.
	ID string `yaml:"id"`
	// Cron is a standard 5-field cron expression (or @hourly, @daily...).
	Cron string `yaml:"cron"`
	// Every is an interval ("15m").
	Every string `yaml:"every"`
	// Timezone is an IANA zone for Cron (default UTC); not allowed with Every.
	Timezone string `yaml:"timezone"`
	// Input is the run's input.
	Input any `yaml:"input"`
}

// Trigger starts a run when another flow's run ends or when a named signal arrives.
type Trigger struct {
	Pos    Pos
	Fields Fields
	// On is completed, failed, finished (either) or signal.
	On string `yaml:"on"`
	// Flow is the flow whose runs are watched (On completed, failed or finished).
	Flow string `yaml:"flow"`
	// Signal is the signal name (On signal).
	Signal string `yaml:"signal"`
	// If is a CEL condition (bare or as one ${{ expr }}) over output, outcome and
	// run.workflow (TriggerScope): false starts nothing. Not on signal.
	If string `yaml:"if"`
	// Input is the new run's input, its strings templates in TriggerScope; without it the
	// input is the ended run's output (the signal's payload on signal, which takes no
	// input).
	Input any `yaml:"input"`
}

// Retry says how a failed node is tried again.
type Retry struct {
	Pos    Pos
	Fields Fields
	// MaxAttempts counts the first attempt (1 means no retry).
	MaxAttempts int `yaml:"max_attempts"`
	// Backoff is the first delay ("1s").
	Backoff string `yaml:"backoff"`
	// MaxBackoff caps the delay.
	MaxBackoff string `yaml:"max_backoff"`
	// Factor multiplies the delay after each attempt (default 2).
	Factor float64 `yaml:"factor"`
}

// Cache is a step's cache: a result stored under the key less than ttl ago is reused
// without running the step.
type Cache struct {
	Pos    Pos
	Fields Fields
	// Key is a template; entries are per flow unless Shared.
	Key string `yaml:"key"`
	// TTL is how long an entry is reused ("10m").
	TTL string `yaml:"ttl"`
	// Shared shares the key with every flow of the blob store.
	Shared bool `yaml:"shared"`
}

// OnError actions.
const (
	// ActionFail fails the node (and, unhandled, the run). The default.
	ActionFail = "fail"
	// ActionContinue records the failure and goes on with the next node.
	ActionContinue = "continue"
	// ActionGoto jumps to the node named by Target.
	ActionGoto = "goto"
)

// OnError is what a node's failure (or, as on_timeout, its deadline) does: "fail",
// "continue" or "goto <id>". Written as one string.
type OnError struct {
	Pos Pos
	// Raw is the string as written.
	Raw string
	// Action is fail, continue or goto ("" when Raw is not one of them).
	Action string
	// Target is the node id after "goto".
	Target string
}

func (o *OnError) setScalar(s string, p Pos) {
	o.Raw, o.Pos = s, p
	f := strings.Fields(s)
	switch {
	case len(f) == 1 && (f[0] == ActionFail || f[0] == ActionContinue):
		o.Action = f[0]
	case len(f) == 2 && f[0] == ActionGoto:
		o.Action, o.Target = ActionGoto, f[1]
	}
}

// Kind is a node's kind, decided by the keyword it carries (uses, set, check, switch,
// then, loop, parallel, foreach, call, gate, sleep, send, finish).
type Kind string

// Node kinds.
const (
	KindStep     Kind = "step"
	KindSet      Kind = "set"
	KindCheck    Kind = "check"
	KindSwitch   Kind = "switch"
	KindIf       Kind = "if"
	KindLoop     Kind = "loop"
	KindParallel Kind = "parallel"
	KindForeach  Kind = "foreach"
	KindCall     Kind = "call"
	KindGate     Kind = "gate"
	KindSleep    Kind = "sleep"
	KindSend     Kind = "send"
	KindFinish   Kind = "finish"
)

// Node is one element of a node list. Which fields mean something depends on Kind; the
// fields common to every kind come first.
type Node struct {
	// Pos is where the node's mapping starts; Fields where each key's value is.
	Pos    Pos
	Fields Fields
	// Kind is set by Parse from the node's keyword.
	Kind Kind `yaml:"-"`

	// ID names the node: steps.<id>.output, goto targets, the event log.
	ID string `yaml:"id"`
	// Name is a human label.
	Name string `yaml:"name"`
	// Description is free text.
	Description string `yaml:"description"`
	// If skips the node unless the CEL expression is true (on an if node: the condition).
	If string `yaml:"if"`
	// Retry retries a failed node.
	Retry *Retry `yaml:"retry"`
	// Timeout bounds the node ("30s").
	Timeout string `yaml:"timeout"`
	// OnError is what a failure does.
	OnError *OnError `yaml:"on_error"`
	// OnTimeout is what the deadline does (default: as OnError).
	OnTimeout *OnError `yaml:"on_timeout"`
	// CostLimit caps the node's spend in USD ("0.50").
	CostLimit string `yaml:"cost_limit"`
	// OutputSchema is the JSON Schema the node's output must satisfy.
	OutputSchema Schema `yaml:"output_schema"`

	// Uses names the action of a step: shell, http, agent or a registered action.
	Uses string `yaml:"uses"`
	// Service names the service a step calls (flow.UseService): its steps share the
	// service's rate limit and circuit breaker.
	Service string `yaml:"service"`
	// Cache reuses a step's result (flow.Cache, flow.SharedCache).
	Cache *Cache `yaml:"cache"`
	// With is the params of a step, or the input of a call (strings are templates).
	With map[string]any `yaml:"with"`
	// Set assigns run variables (strings are templates).
	Set map[string]any `yaml:"set"`
	// Check is the CEL assertion of a check node.
	Check string `yaml:"check"`
	// Message is a check's failure message (template).
	Message string `yaml:"message"`
	// Switch is the CEL expression a switch node compares with each case's value.
	Switch string `yaml:"switch"`
	// Cases are a switch's branches.
	Cases []*Case `yaml:"cases"`
	// Default runs when no case matched.
	Default []*Node `yaml:"default"`
	// Then runs when an if node's condition is true.
	Then []*Node `yaml:"then"`
	// Else runs otherwise.
	Else []*Node `yaml:"else"`
	// Loop is a loop node's spec.
	Loop *Loop `yaml:"loop"`
	// Parallel lists the branches of a parallel node, one node per branch (a branch of
	// several steps is an if node with `if: "true"` and then, or a call).
	Parallel []*Node `yaml:"parallel"`
	// FailFast cancels the other branches at the first failure.
	FailFast bool `yaml:"fail_fast"`
	// MinSuccess is how many branches must succeed (default all).
	MinSuccess int `yaml:"min_success"`
	// Foreach is a foreach node's spec.
	Foreach *Foreach `yaml:"foreach"`
	// Call names the flow a call node runs as a child (a definition or a Go flow).
	Call string `yaml:"call"`
	// Detached starts the child and does not wait for it.
	Detached bool `yaml:"detached"`
	// Gate is a gate node's spec.
	Gate *Gate `yaml:"gate"`
	// Sleep is a sleep node's duration.
	Sleep string `yaml:"sleep"`
	// Send is a send node's spec.
	Send *Send `yaml:"send"`
	// Finish is a finish node's spec.
	Finish *Finish `yaml:"finish"`

	badType map[string]bool // keys whose value had the wrong type (already reported)
}

// Case is one branch of a switch: its steps run when the switch value equals Value.
type Case struct {
	Pos    Pos
	Fields Fields
	// Value is compared with the switch expression's value.
	Value any `yaml:"value"`
	// Steps run when it matches.
	Steps []*Node `yaml:"steps"`
}

// Loop repeats Steps: while a condition holds (checked before), until one holds (checked
// after: a do-while), or once per element of a list. MaxIterations bounds it.
type Loop struct {
	Pos    Pos
	Fields Fields
	// While is checked before each iteration.
	While string `yaml:"while"`
	// Until is checked after each iteration (the body runs at least once).
	Until string `yaml:"until"`
	// Over is a CEL expression giving a list; each element is `item` in the body.
	Over string `yaml:"over"`
	// As renames `item` (e.g. "file").
	As string `yaml:"as"`
	// MaxIterations bounds the loop (required with While or Until).
	MaxIterations int `yaml:"max_iterations"`
	// Steps is the body.
	Steps []*Node `yaml:"steps"`
}

// Item failure policies of a foreach.
const (
	ItemFailFail     = "fail"
	ItemFailContinue = "continue"
	// ItemFailSkipDependents runs the other items but skips those that depend (through
	// depends_on, directly or not) on a failed one.
	ItemFailSkipDependents = "skip_dependents"
)

// Foreach runs work once per item: of a list (Over) or from a registered item provider
// (Provider). Each item runs either a child run of another flow (Call, with With as its
// input) or the inline Steps.
type Foreach struct {
	Pos    Pos
	Fields Fields
	// Over is a CEL expression giving the list.
	Over string `yaml:"over"`
	// Provider names a registered item provider (instead of Over).
	Provider string `yaml:"provider"`
	// Params are the provider's params (templates).
	Params map[string]any `yaml:"params"`
	// As renames `item`.
	As string `yaml:"as"`
	// MaxParallel bounds the items in flight (default 1).
	MaxParallel int `yaml:"max_parallel"`
	// Ordered starts an item only after the items it depends on (their depends_on ids:
	// a provider's items, or the id and depends_on fields of over's map elements) have
	// finished; a dependency cycle fails the node before any item starts. Items without
	// depends_on (plain values) start in list order. Outputs are in item order either way.
	Ordered bool `yaml:"ordered"`
	// OnItemFail is fail (default: stop and fail), continue or skip_dependents.
	OnItemFail string `yaml:"on_item_fail"`
	// Call runs one child run of this flow per item.
	Call string `yaml:"call"`
	// With is the child's input (templates over item).
	With map[string]any `yaml:"with"`
	// Steps run inline per item (instead of Call).
	Steps []*Node `yaml:"steps"`
}

// Gate types.
const (
	GateApproval = "approval"
	GateInput    = "input"
	GateSignal   = "signal"
	GatePoll     = "poll"
	GateQuality  = "quality"
)

// Gate waits: for people (approval), for a typed answer (input), for a keyed signal, for
// a polled resolver (poll) or on the score of an earlier step (quality).
type Gate struct {
	Pos    Pos
	Fields Fields
	// Type is approval, input, signal, poll or quality.
	Type string `yaml:"type"`
	// Prompt is shown to people (template).
	Prompt string `yaml:"prompt"`
	// Approvers may decide (approval, input): user names, "group:<name>" entries and
	// templates rendered when the gate opens (an entry that is exactly one ${{ expr }}
	// giving a list adds every element). Empty: anyone with an identity.
	Approvers []string `yaml:"approvers"`
	// Required is the quorum of an approval gate: how many distinct people must approve
	// (approval.Request.Required; 0 means 1).
	Required int `yaml:"required"`
	// OnTimeout is what an approval gate's deadline (the node's timeout) does: reject
	// (default: the gate times out and the node's on_timeout routes it), approve (the
	// gate closes approved by nobody) or fail (the run fails, whatever the node says).
	// approval.Request.OnTimeout.
	OnTimeout string `yaml:"on_timeout"`
	// Schema is the JSON Schema of the answer (input).
	Schema Schema `yaml:"schema"`
	// Signal is the signal name (signal).
	Signal string `yaml:"signal"`
	// Key selects one signal among those of that name (template).
	Key string `yaml:"key"`
	// Resolver is the polled resolver type (poll): http, command or a registered one.
	Resolver string `yaml:"resolver"`
	// Params are the resolver's params (templates).
	Params map[string]any `yaml:"params"`
	// PollInterval is the delay between polls.
	PollInterval string `yaml:"poll_interval"`
	// AllowManual lets people decide a poll gate early.
	AllowManual bool `yaml:"allow_manual"`
	// Source is the step whose output is scored (quality).
	Source string `yaml:"source"`
	// Threshold is the minimum score out of 100 (quality).
	Threshold float64 `yaml:"threshold"`
	// OnFail is fail (default) or continue (quality).
	OnFail string `yaml:"on_fail"`
}

// Send signals another run (Run, an id template) or posts to a mailbox.
type Send struct {
	Pos    Pos
	Fields Fields
	// Signal is the signal name.
	Signal string `yaml:"signal"`
	// Run is the target run id (template); empty with Mailbox.
	Run string `yaml:"run"`
	// Mailbox is a named mailbox (instead of Run).
	Mailbox string `yaml:"mailbox"`
	// Key is the signal key (template).
	Key string `yaml:"key"`
	// Payload is sent (strings are templates).
	Payload any `yaml:"payload"`
}

// Finish statuses.
const (
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Finish ends the run with a status and an output.
type Finish struct {
	Pos    Pos
	Fields Fields
	// Status is completed (default), failed or cancelled.
	Status string `yaml:"status"`
	// Output is the run's output (strings are templates).
	Output any `yaml:"output"`
	// Message explains a failure (template).
	Message string `yaml:"message"`
}
