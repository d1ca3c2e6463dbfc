package runs

import (
	"github.com/gateflow/gateflow/artifacts"

	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/signals"
	"github.com/shopspring/decimal"
)

// Status is a run's status, kept in the FlowStatus search attribute and in State.
type Status string

// Run statuses.
const (
	StatusPending          Status = "pending"
	StatusRunning          Status = "running"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusAwaitingInput    Status = "awaiting_input"
	StatusWaitingSignal    Status = "waiting_signal"
	StatusSleeping         Status = "sleeping"
	StatusBudgetPaused     Status = "budget_paused"
	StatusAwaitingGate     Status = "awaiting_gate"    // a polled gate (ctx.Gate) has not decided yet
	StatusWaitingCapacity  Status = "waiting_capacity" // a provider rate limited a step; it waits without using attempts
	StatusPaused           Status = "paused"           // paused by someone (Client.PauseRun): no new step until resumed
	StatusCompleted        Status = "completed"
	StatusWarning          Status = "warning"
	StatusFailed           Status = "failed"
	StatusRejected         Status = "rejected"
	StatusCancelled        Status = "cancelled"
	StatusBudgetExceeded   Status = "budget_exceeded"
)

// statuses lists every run status in lifecycle order.
var statuses = []Status{
	StatusPending, StatusRunning, StatusAwaitingApproval, StatusAwaitingInput, StatusWaitingSignal,
	StatusSleeping, StatusBudgetPaused, StatusAwaitingGate, StatusWaitingCapacity, StatusPaused, StatusCompleted, StatusWarning, StatusFailed, StatusRejected,
	StatusCancelled, StatusBudgetExceeded,
}

// Statuses are all run statuses, in the order of the design: the live ones, then the
// terminal ones.
func Statuses() []Status { return append([]Status(nil), statuses...) }

// ParseStatus checks that s names a run status.
func ParseStatus(s string) (Status, error) {
	for _, st := range statuses {
		if string(st) == s {
			return st, nil
		}
	}
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	return "", fmt.Errorf("want one of %s", strings.Join(names, ", "))
}

// Terminal reports whether a run with this status has ended.
func (s Status) Terminal() bool {
	switch s {
	case StatusCompleted, StatusWarning, StatusFailed, StatusRejected, StatusCancelled, StatusBudgetExceeded:
		return true
	}
	return false
}

// StepKind says what a step does.
type StepKind string

// Step kinds.
const (
	KindShell    StepKind = "shell"
	KindHTTP     StepKind = "http"
	KindAgent    StepKind = "agent"
	KindMCP      StepKind = "mcp" // a tool of an MCP server (ctx.MCP)
	KindActivity StepKind = "activity"
	KindChild    StepKind = "child"
	KindSkip     StepKind = "skip"
	KindSleep    StepKind = "sleep"
	KindBranch   StepKind = "branch"
	KindApproval StepKind = "approval"
	KindInput    StepKind = "input"
	KindSignal   StepKind = "signal"
	KindSend     StepKind = "send"         // Send and CancelRun: a message to another run or a mailbox
	KindGate     StepKind = "gate"         // a polled gate (ctx.Gate)
	KindQuality  StepKind = "quality_gate" // a quality gate (ctx.QualityGate)
	KindDecision StepKind = "decision"     // a decision (Decide)
)

// StepStatus is the status of one step.
type StepStatus string

// Step statuses.
const (
	// StepRunning: dispatched, no outcome yet.
	StepRunning StepStatus = "running"
	// StepCompleted, StepFailed, StepSkipped and StepCancelled are the outcomes.
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
	StepCancelled StepStatus = "cancelled"
	// StepPlanned is a step of a plan (Client.Plan): it would run; nothing ran.
	StepPlanned StepStatus = "planned"
	// StepTimedOut: a timeout ended the step (Step.Timeout says which).
	StepTimedOut StepStatus = "timed_out"
	// StepChangesRequested is an approval step closed by a request for changes: not a
	// failure of the step; the flow decides what comes next (often another round).
	StepChangesRequested StepStatus = "changes_requested"
	// StepRefused: the step was not dispatched because its money did not fit the cap
	// (a Parallel wave reserved together); Step.Error says why.
	StepRefused StepStatus = "refused"
	// StepWaitingCapacity: the provider rate limited the step; it waits for the provider's
	// Retry-After without using an attempt.
	StepWaitingCapacity StepStatus = "waiting_capacity"
)

// Tokens counts agent tokens.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
}

// Total is input plus output.
func (t Tokens) Total() int64 { return t.Input + t.Output }

// Child is what a parent keeps about a child run: its identity and, once it
// reported, its outcome, cost and steps.
type Child struct {
	ID       string          `json:"id"`
	RunID    string          `json:"run_id,omitempty"`
	Workflow string          `json:"workflow"`
	Status   Status          `json:"status"`
	CostUSD  decimal.Decimal `json:"cost_usd,omitzero"`
	Tokens   Tokens          `json:"tokens,omitzero"`
	Steps    []Step          `json:"steps,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// Step is what a run keeps about one step. It is part of State.
type Step struct {
	// Name is the step's name as the handler gave it; ActivityID is the Temporal activity
	// ID, the name itself or, when the name was used before in the run, name#N.
	Name       string `json:"name"`
	ActivityID string `json:"activity_id"`
	// Kind is what the step does; Status how it stands or ended.
	Kind   StepKind   `json:"kind"`
	Status StepStatus `json:"status"`
	// Attempt is the activity attempt that produced the outcome (1 for the first).
	Attempt int `json:"attempt"`
	// StartedAt and EndedAt are the run's clock when the step began and ended (nil while
	// it runs), to the millisecond (runs recorded before gateflow kept milliseconds have
	// the server's precision).
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// Error is why the step failed or was cancelled.
	Error string `json:"error,omitempty"`
	// ExitCode is set for shell steps that ran to an exit.
	ExitCode *int `json:"exit_code,omitempty"`
	// Output is a short preview of what the step produced.
	Output string `json:"output,omitempty"`
	// RunAttempt is the run attempt (1 for the first) the step belongs to.
	RunAttempt int `json:"run_attempt"`
	// Group is the name of the Parallel call the step ran in.
	Group string `json:"group,omitempty"`
	// Branch is the path of the branch or fan-out item the step ran in ("review",
	// "deploy/eu"), empty outside branches.
	Branch string `json:"branch,omitempty"`
	// DurationMS is how long the step took, once it ended.
	DurationMS int64 `json:"duration_ms,omitempty"`
	// CostUSD is what the step cost (agent calls, steps that report a cost, children).
	CostUSD decimal.Decimal `json:"cost_usd,omitzero"`
	// Tokens are the agent tokens the step used.
	Tokens *Tokens `json:"tokens,omitempty"`
	// HTTPStatus is set for HTTP steps that got a response.
	HTTPStatus int `json:"http_status,omitempty"`
	// AllowedFailure marks a failed step the handler allowed to fail.
	AllowedFailure bool `json:"allowed_failure,omitempty"`
	// OnError marks a cleanup step registered with OnError, run because the run failed.
	OnError bool `json:"on_error,omitempty"`
	// Always marks a step registered with Always, run because the run ended.
	Always bool `json:"always,omitempty"`
	// Child describes the child run of a child step.
	Child *Child `json:"child,omitempty"`
	// Attempts lists each attempt of a cost-bearing step (agents, decisions, steps with a
	// CostLimit), which the run retries itself one activity attempt at a time: what each
	// cost and why it failed.
	Attempts []Attempt `json:"attempts,omitempty"`
	// CostLimitUSD is the step's own cost limit, when it has one; Overshoot marks a step
	// that cost more than that.
	CostLimitUSD *decimal.Decimal `json:"cost_limit_usd,omitempty"`
	Overshoot    bool             `json:"overshoot,omitempty"`
	// UnconfirmedUSD is the part of CostUSD charged for attempts lost in flight (their
	// worker died, or they timed out, before reporting a cost): each is charged its whole
	// reservation, as the provider may have billed it, until proven otherwise.
	UnconfirmedUSD decimal.Decimal `json:"unconfirmed_usd,omitzero"`
	// Timeout names the timeout that ended a timed_out step: "start_to_close",
	// "schedule_to_start", "schedule_to_close" or "heartbeat".
	Timeout string `json:"timeout,omitempty"`
	// Route says what the step's error routing (OnFailure, OnTimeout) did with its
	// failure: "continue", "fallback", "goto build (2 of 3)".
	Route string `json:"route,omitempty"`
	// Gate is a polled gate's type, polls and decision.
	Gate *Gate `json:"gate,omitempty"`
	// Quality is a quality gate's score and threshold.
	Quality *Quality `json:"quality,omitempty"`
	// Decision is a decision step's options and choice.
	Decision *Decision `json:"decision,omitempty"`
	// Cached marks a step whose result came from the step cache (Cache) without running;
	// CachedAgeMS is how old the entry was.
	Cached      bool  `json:"cached,omitempty"`
	CachedAgeMS int64 `json:"cached_age_ms,omitempty"`
	// Artifacts are the files a shell step left for later steps (activities.Shell.Outputs),
	// in the blob store; a failed step lists what it could still collect.
	Artifacts []artifacts.Artifact `json:"artifacts,omitempty"`
}

// Attempt is one attempt of a cost-bearing step.
type Attempt struct {
	// Attempt counts from 1.
	Attempt int `json:"attempt"`
	// CostUSD and Tokens are what the attempt cost, paid whether or not it succeeded.
	CostUSD decimal.Decimal `json:"cost_usd,omitzero"`
	Tokens  Tokens          `json:"tokens,omitzero"`
	// Error is why the attempt failed; empty for the attempt that succeeded.
	Error string `json:"error,omitempty"`
	// WaitedMS is how long the attempt waited for provider capacity (rate limits) before it
	// was made.
	WaitedMS int64 `json:"waited_ms,omitempty"`
	// Unconfirmed marks an attempt lost in flight, charged its reservation (CostUSD)
	// because what it cost is unknown.
	Unconfirmed bool `json:"unconfirmed,omitempty"`
}

// Duration is how long the step took, or has been running until now.
func (r Step) Duration(now time.Time) time.Duration {
	if r.EndedAt != nil {
		return r.EndedAt.Sub(r.StartedAt)
	}
	return now.Sub(r.StartedAt)
}

// State is a run's state as the Query gateflow.state returns it, and as it is kept in
// the run's Memo when the run ends.
type State struct {
	// ID is the run's ID (its Temporal workflow ID).
	ID string `json:"id,omitempty"`
	// Workflow is the flow's name and Version the flow version the run started with.
	Workflow string `json:"workflow"`
	Version  string `json:"version,omitempty"`
	// Status is the run's status (also the FlowStatus search attribute).
	Status Status `json:"status"`
	// StartedAt is when the run (for a child: its top-level run) started; EndedAt when it
	// ended, with Error saying why it did not complete. Like every time of the state they
	// are to the millisecond.
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Error     string     `json:"error,omitempty"`
	// Output is the JSON of what the handler returned (with its error, for a run that did
	// not complete), once it returned; an output over 64 KiB is replaced by a JSON string
	// saying so. Runs ended before the handler ran have none.
	Output json.RawMessage `json:"output,omitempty"`
	// Attempt is the current run attempt (1 for the first) of MaxAttempts.
	Attempt     int `json:"attempt"`
	MaxAttempts int `json:"max_attempts"`
	// CostUSD is what the run and its children spent, over all attempts.
	CostUSD decimal.Decimal `json:"cost_usd,omitzero"`
	// Tokens are the agent tokens the run and its children used.
	Tokens Tokens `json:"tokens,omitzero"`
	// AllowedFailures counts steps that failed and were allowed to.
	AllowedFailures int `json:"allowed_failures,omitempty"`
	// Depth is 0 for a top-level run, 1 for its children, and so on; ParentID names the
	// parent run.
	Depth    int    `json:"depth,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
	// Guards are the limits in force.
	Guards Guards `json:"guards,omitzero"`
	Steps  []Step `json:"steps"`
	// Waiting lists what the run waits for now: "approval:GATE", "input:NAME",
	// "signal:NAME" or "signal:NAME/KEY" (also the FlowWaiting search attribute).
	Waiting []string `json:"waiting,omitempty"`
	// Gates are the approval gates the run opened, open or decided, with their votes.
	Gates []*approval.Gate `json:"gates,omitempty"`
	// Inputs are the human inputs the run asked for, with their answers.
	Inputs []*signals.Input `json:"inputs,omitempty"`
	// SignalWaits are the signals the run waited for.
	SignalWaits []*signals.Wait `json:"signal_waits,omitempty"`
	// KeptVotes are votes sent before the run reached their gate: they are checked against
	// the gate's rules, and count, when a gate of that name opens (by gate name, then
	// arrival).
	KeptVotes []approval.Vote `json:"kept_votes,omitempty"`
	// Refused are votes and signals that arrived as Signals and were refused, with why.
	Refused []RefusedMessage `json:"refused,omitempty"`
	// Paused says who paused the run, why and since when, while it is paused (Workflow is
	// the run's workflow).
	Paused *PausedType `json:"paused,omitempty"`
	// Problems are failures of gateflow's own bookkeeping that did not fail the run (a
	// concurrency permit that could not be given back), each saying what and why.
	Problems []string `json:"problems,omitempty"`
	// Budget is the run's money: cap (and where it came from), spent, reserved, charges
	// and warnings, all exact decimals.
	Budget *budget.Ledger `json:"budget,omitempty"`
	// Labels are the labels (Context.Label) the run entered, with their visits.
	Labels []Label `json:"labels,omitempty"`
	// Auth is how the run verifies decisions, pinned when it started (nil: its worker
	// verifies nothing, and identities are what senders typed).
	Auth *Auth `json:"auth,omitempty"`
}

// Auth is a run's pinned decision policy, as State shows it: whether proofs are
// required, the key IDs of its directory and its identity provider.
type Auth struct {
	Required bool     `json:"required"`
	KeyIDs   []string `json:"key_ids,omitempty"`
	Issuer   string   `json:"issuer,omitempty"`
	// Rules say who may raise the budget, pause or resume (auth.Policy.Rules).
	Rules map[auth.Kind][]string `json:"rules,omitempty"`
}

// RefusalKind is what kind of message a run refused.
type RefusalKind string

// Refusal kinds.
const (
	// RefusedVote is a vote sent as a Signal that could not count.
	RefusedVote RefusalKind = "vote"
	// RefusedSignal is a signal whose envelope or payload was refused.
	RefusedSignal RefusalKind = "signal"
)

// RefusedMessage is a vote, answer or signal a run refused after it arrived as a Signal
// (Updates are refused before they reach the run and leave no trace).
type RefusedMessage struct {
	Kind   RefusalKind `json:"kind"`
	Name   string      `json:"name"`
	By     string      `json:"by,omitempty"`
	Reason string      `json:"reason"`
	At     time.Time   `json:"at"`
}

// Label is the step's name as people read it: its branch and Parallel group first
// ("checks/unit", "deploy/eu/smoke").
func (r Step) Label() string {
	parts := make([]string, 0, 3)
	for _, p := range []string{r.Branch, r.Group, r.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

// StatusText is the step's status with what qualifies it: "failed (allowed)",
// "timed_out (allowed)", "completed (on error)", "completed (always)", and where its
// failure went: "failed, fallback build/fallback", "failed, goto build (2 of 3)".
func (r Step) StatusText() string {
	s := string(r.Status)
	if r.AllowedFailure {
		s += " (allowed)"
	} else if r.Route != "" {
		s += ", " + r.Route
	}
	if r.OnError {
		s += " (on error)"
	}
	if r.Always {
		s += " (always)"
	}
	return s
}

// CostText is what the step cost to four decimals ("$0.0150"), or "-" for nothing; a
// step that cost more than its own limit says so: "$0.4500 > $0.25 limit".
func (r Step) CostText() string {
	if r.CostUSD.IsZero() {
		return "-"
	}
	s := "$" + r.CostUSD.StringFixed(4)
	if r.Overshoot && r.CostLimitUSD != nil {
		s += " > " + budget.FormatUSD(*r.CostLimitUSD) + " limit"
	}
	return s
}

// CodeText is a shell step's exit code or an HTTP step's status, or "-".
func (r Step) CodeText() string {
	switch {
	case r.ExitCode != nil:
		return strconv.Itoa(*r.ExitCode)
	case r.HTTPStatus != 0:
		return strconv.Itoa(r.HTTPStatus)
	}
	return "-"
}

// Detail is the step's error, or else its output preview, on one line and at most n
// runes.
func (r Step) Detail(n int) string {
	d := r.Output
	if r.Error != "" {
		d = r.Error
	}
	if r.Cached {
		d = strings.TrimSuffix(cachedDetail(time.Duration(r.CachedAgeMS)*time.Millisecond)+": "+d, ": ")
	}
	return display.Preview(display.OneLine(d), n)
}

// Nested is the run's steps in reading order: each branch (or fan-out item) followed by
// the steps recorded inside it, the rest in the order they started. Tables (the Web UI
// details, flowctl show) list steps this way.
func (s *State) Nested() []Step {
	children := map[string][]int{}
	for i, st := range s.Steps {
		children[st.Branch] = append(children[st.Branch], i)
	}
	out := make([]Step, 0, len(s.Steps))
	seen := make([]bool, len(s.Steps))
	var emit func(i int)
	emit = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		st := s.Steps[i]
		out = append(out, st)
		if st.Kind == KindBranch {
			for _, j := range children[strings.TrimPrefix(st.Branch+"/"+st.Name, "/")] {
				emit(j)
			}
		}
	}
	// Top-level steps, and steps whose branch has no record of its own (a fan-out's
	// items, a Parallel group's branches), each followed by what ran inside it.
	for i := range s.Steps {
		emit(i)
	}
	return out
}

// StepWaitingService is what Client.Describe reports for a step whose last attempt failed
// fast on an open breaker and whose next attempt waits for the breaker's open time; the
// step's Error names the service.
const StepWaitingService StepStatus = "waiting_service"

// Guards are execution limits on a run and the tree of child runs below it. A zero field
// means the default (see flow.DefaultGuards); a negative one means no limit.
type Guards struct {
	// MaxChildDepth is how deep child runs may nest (a top-level run is depth 0, its
	// children depth 1). Default 5.
	MaxChildDepth int `json:"max_child_depth,omitempty"`
	// MaxFanOut is the most steps one Parallel call may run, and the most child runs one
	// run may start. Default 50.
	MaxFanOut int `json:"max_fan_out,omitempty"`
	// MaxTokens is the most agent tokens (input and output) the run and its children may
	// use together. Default: no limit.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxWallTime bounds the run from its start; steps get no more than what is left.
	// Default: no limit.
	MaxWallTime time.Duration `json:"max_wall_time,omitempty"`
	// MaxSteps is the most steps the run may record: every step of its own (activities,
	// sleeps, skips, branches, approvals, inputs, signals, gates, sends, children, each
	// Parallel or ForEach step), over all its attempts and plans too. A child run counts its
	// own steps against the same limit; the parent counts the child as one step. The step
	// past the limit is refused before it runs (recorded failed with a *GuardError);
	// OnError and Always steps are neither counted nor refused. Default 10,000 (about what
	// fits in a Temporal history).
	MaxSteps int `json:"max_steps,omitempty"`
}
