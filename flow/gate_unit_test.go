package flow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/protocol"
)

// scriptedResolver answers polls from a script: answer i for poll i, the last one for
// every poll after the script.
type scriptedResolver struct {
	typ     string
	answers []gates.Poll
	errs    []error
	mu      sync.Mutex
	seen    []gates.Params
}

func (s *scriptedResolver) Type() string { return s.typ }

func (s *scriptedResolver) Poll(_ context.Context, p gates.Params) (gates.Poll, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, p)
	i := min(len(s.seen), max(len(s.answers), len(s.errs))) - 1
	var poll gates.Poll
	var err error
	if i < len(s.answers) {
		poll = s.answers[i]
	}
	if i < len(s.errs) {
		err = s.errs[i]
	}
	return poll, err
}

func (s *scriptedResolver) polls() []gates.Params {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]gates.Params(nil), s.seen...)
}

// polledCase configures polledFlow.
type polledCase struct {
	Req gates.Request `json:"req"`
	// Before sleeps before the gate; Return returns the gate's error.
	Before time.Duration `json:"before,omitempty"`
	After  time.Duration `json:"after,omitempty"`
	Return bool          `json:"return,omitempty"`
}

// polledOut is what polledFlow saw.
type polledOut struct {
	Res      gates.Result `json:"res"`
	Err      string       `json:"err,omitempty"`
	Rejected bool         `json:"rejected,omitempty"`
	Reason   string       `json:"reason,omitempty"`
	TimedOut bool         `json:"timed_out,omitempty"`
	Invalid  bool         `json:"invalid,omitempty"`
	Step     bool         `json:"step,omitempty"`
}

var polledFlow = Define("gates/polled", func(ctx *Context, in polledCase) (polledOut, error) {
	if in.Before > 0 {
		if err := ctx.Sleep("before", in.Before); err != nil {
			return polledOut{}, err
		}
	}
	res, err := ctx.Gate("checks", in.Req)
	if in.After > 0 {
		if serr := ctx.Sleep("after", in.After); serr != nil {
			return polledOut{}, serr
		}
	}
	if in.Return {
		return polledOut{Res: res}, err
	}
	out := polledOut{Res: res}
	if err != nil {
		out.Err = err.Error()
		var rej *gates.RejectedError
		if errors.As(err, &rej) {
			out.Rejected, out.Reason = true, rej.Reason()
		}
		var se *StepError
		out.TimedOut, out.Invalid, out.Step = errors.Is(err, gates.ErrTimedOut), ErrorInvalidStep.Is(err), errors.As(err, &se)
	}
	return out, nil
})

// gateEnv is a test environment whose worker has the resolvers r (and the built-ins);
// polls counts the poll activities started and timers the timers.
type gateEnv struct {
	*testsuite.TestWorkflowEnvironment
	mu     sync.Mutex
	polls  int
	timers []time.Duration
}

func newGateEnv(t *testing.T, r ...gates.Resolver) *gateEnv {
	t.Helper()
	acts, err := newGateActivities(r)
	require.NoError(t, err)
	env := &gateEnv{TestWorkflowEnvironment: newUnitEnv(t, runConfig{directory: peopleDir, gateTypes: acts.types}, polledFlow)}
	env.RegisterActivityWithOptions(acts.poll, activity.RegisterOptions{Name: protocol.GatePollActivity})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == protocol.GatePollActivity {
			env.mu.Lock()
			env.polls++
			env.mu.Unlock()
		}
	})
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
		env.mu.Lock()
		env.timers = append(env.timers, d)
		env.mu.Unlock()
	})
	return env
}

func (e *gateEnv) run(t *testing.T, in polledCase) (polledOut, runs.State) {
	t.Helper()
	e.ExecuteWorkflow(polledFlow.Name(), in)
	require.True(t, e.IsWorkflowCompleted())
	var out polledOut
	if !in.Return {
		require.NoError(t, e.GetWorkflowError())
		require.NoError(t, e.GetWorkflowResult(&out))
	}
	return out, queryState(t, e.TestWorkflowEnvironment)
}

func gateStep(t *testing.T, st runs.State) runs.Step {
	t.Helper()
	for _, s := range st.Steps {
		if s.Kind == runs.KindGate {
			require.NotNil(t, s.Gate, "a gate step has a gate record")
			return s
		}
	}
	t.Fatal("no gate step")
	return runs.Step{}
}

func TestGatePollsUntilApproved(t *testing.T) {
	r := &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Pending("queued"), gates.Pending("running 3/9"), gates.Approved("all green")}}
	env := newGateEnv(t, r)
	waiting := stateAt(t, env.TestWorkflowEnvironment, 15*time.Second)
	out, st := env.run(t, polledCase{Req: gates.Request{Type: "ci", Params: map[string]any{"pipeline": 812}, PollInterval: 10 * time.Second}})

	assert.Empty(t, out.Err)
	assert.Equal(t, gates.OutcomeApproved, out.Res.Outcome)
	assert.Equal(t, "ci", out.Res.By)
	assert.Equal(t, "all green", out.Res.Comment)
	assert.Equal(t, 3, out.Res.Polls)
	assert.False(t, out.Res.Manual)

	// Three polls, one activity each, with a durable timer of the interval between them.
	assert.Equal(t, 3, env.polls)
	assert.Equal(t, []time.Duration{10 * time.Second, 10 * time.Second}, env.timers)
	seen := r.polls()
	require.Len(t, seen, 3)
	for i, p := range seen {
		assert.Equal(t, i+1, p.Poll)
		assert.Equal(t, "checks", p.Gate)
		assert.Equal(t, "ci", p.Type)
		assert.NotEmpty(t, p.RunID)
		assert.JSONEq(t, `{"pipeline":812}`, string(p.Params))
	}

	// While it waits the run says so.
	assert.Equal(t, runs.StatusAwaitingGate, waiting.Status)
	assert.Equal(t, []string{"gate:checks/ci"}, waiting.Waiting)
	w := gateStep(t, *waiting)
	assert.Equal(t, runs.StepRunning, w.Status)
	assert.Equal(t, 2, w.Gate.Polls)
	assert.Equal(t, "ci gate: poll 2 pending: running 3/9", w.Output)

	s := gateStep(t, st)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, "approved by ci after 3 polls: all green", s.Output)
	assert.Equal(t, 3, s.Gate.Polls)
	assert.Equal(t, gates.OutcomeApproved, s.Gate.Decision)
	assert.Equal(t, "ci", s.Gate.By)
	assert.Equal(t, "all green", s.Gate.Comment)
	assert.Equal(t, int64(20_000), s.DurationMS)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Empty(t, st.Waiting)
}

func TestGateRejectEndsWithTheReason(t *testing.T) {
	r := &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Pending(""), gates.Rejected("unit tests failed")}}
	env := newGateEnv(t, r)
	out, st := env.run(t, polledCase{Req: gates.Request{Type: "ci", PollInterval: time.Second}})
	assert.True(t, out.Rejected)
	assert.False(t, out.Step, "a decision is not a step failure")
	assert.Equal(t, "unit tests failed", out.Reason)
	assert.Equal(t, "gate checks: rejected by ci after 2 polls: unit tests failed", out.Err)
	s := gateStep(t, st)
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Equal(t, out.Err, s.Error)
	assert.Equal(t, gates.OutcomeRejected, s.Gate.Decision)
	assert.Equal(t, "unit tests failed", s.Gate.Reason)

	// Returned by the handler, a rejection ends the run as rejected.
	env = newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Rejected("red")}})
	_, st = env.run(t, polledCase{Req: gates.Request{Type: "ci"}, Return: true})
	assert.Equal(t, runs.StatusRejected, st.Status)
	require.Error(t, env.GetWorkflowError())
	assert.True(t, ErrorRejected.Is(env.GetWorkflowError()), "got %v", env.GetWorkflowError())
	assert.Contains(t, st.Error, "gate checks: rejected by ci after 1 poll: red")
}

func TestGateTimeoutFollowsOnTimeout(t *testing.T) {
	for _, tc := range []struct {
		on       gates.OnTimeout
		outcome  gates.Outcome
		status   runs.StepStatus
		err      string
		timedOut bool
		rejected bool
	}{
		{on: "", outcome: gates.OutcomeTimedOut, status: runs.StepTimedOut, timedOut: true,
			err: "gate checks: timed out after 35s (4 polls) without a decision; last poll: still red"},
		{on: gates.FailOnTimeout, outcome: gates.OutcomeTimedOut, status: runs.StepTimedOut, timedOut: true,
			err: "gate checks: timed out after 35s (4 polls) without a decision; last poll: still red"},
		{on: gates.ApproveOnTimeout, outcome: gates.OutcomeApproved, status: runs.StepCompleted},
		{on: gates.RejectOnTimeout, outcome: gates.OutcomeRejected, status: runs.StepTimedOut, rejected: true,
			err: "gate checks: rejected at the deadline after 4 polls: no decision within 35s"},
		{on: gates.ContinueOnTimeout, outcome: gates.OutcomeTimedOut, status: runs.StepCompleted},
	} {
		t.Run(string(tc.on), func(t *testing.T) {
			env := newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Pending("still red")}})
			out, st := env.run(t, polledCase{Req: gates.Request{Type: "ci", PollInterval: 10 * time.Second, Timeout: 35 * time.Second, OnTimeout: tc.on}})
			assert.Equal(t, tc.outcome, out.Res.Outcome)
			assert.Equal(t, gates.TimeoutActor, out.Res.By)
			assert.Equal(t, 4, out.Res.Polls, "polls at 0s, 10s, 20s and 30s; the deadline at 35s")
			assert.Equal(t, 4, env.polls)
			assert.Equal(t, []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second, 5 * time.Second}, env.timers,
				"the last sleep ends at the deadline")
			assert.Equal(t, tc.err, out.Err)
			assert.Equal(t, tc.timedOut, out.TimedOut)
			assert.Equal(t, tc.rejected, out.Rejected)
			s := gateStep(t, st)
			assert.Equal(t, tc.status, s.Status)
			assert.Equal(t, tc.outcome, s.Gate.Decision)
			assert.Equal(t, int64(35_000), s.DurationMS)
			assert.Equal(t, "still red", out.Res.Message)
		})
	}
}

func TestGateUnknownTypeIsRefusedWithoutAnActivity(t *testing.T) {
	env := newGateEnv(t, &scriptedResolver{typ: "ci"})
	out, st := env.run(t, polledCase{Req: gates.Request{Type: "jira"}})
	assert.True(t, out.Invalid, "an ErrorInvalidStep")
	assert.True(t, out.Step)
	assert.Equal(t, `step checks: gate checks: no gate resolver of type "jira" on this worker (registered: ci, command, http)`, out.Err)
	assert.Zero(t, env.polls, "no poll activity was scheduled")
	assert.Empty(t, env.timers)
	s := gateStep(t, st)
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Equal(t, "jira", s.Gate.Type)
	assert.Zero(t, s.Gate.Polls)
}

func TestGateRequestValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  gates.Request
		err  string
	}{
		{"empty type", gates.Request{}, "gate checks: the gate type is empty"},
		{"negative interval", gates.Request{Type: "ci", PollInterval: -time.Second}, "gate checks: poll interval is -1s; want 0 (meaning 30s) or at least 1s"},
		{"interval below the minimum", gates.Request{Type: "ci", PollInterval: 100 * time.Millisecond}, "poll interval is 100ms; the minimum is 1s"},
		{"negative timeout", gates.Request{Type: "ci", Timeout: -time.Hour}, "timeout is -1h0m0s; want 0 (no deadline) or more"},
		{"negative poll timeout", gates.Request{Type: "ci", PollTimeout: -time.Second}, "poll timeout is -1s"},
		{"unknown on_timeout", gates.Request{Type: "ci", OnTimeout: "later"}, `on_timeout "later" is not one of fail, approve, reject or continue`},
		{"too many polls", gates.Request{Type: "ci", PollInterval: time.Second, Timeout: time.Hour}, "is 3600 polls; the limit is 2000"},
		{"params not an object", gates.Request{Type: "ci", Params: "x"}, "params must be a JSON object, not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Approved("")}})
			out, st := env.run(t, polledCase{Req: tc.req})
			assert.True(t, out.Invalid, "an ErrorInvalidStep: %s", out.Err)
			assert.Contains(t, out.Err, tc.err)
			assert.Zero(t, env.polls)
			assert.Equal(t, runs.StepFailed, gateStep(t, st).Status)
		})
	}
}

func TestGateManualApproveEndsThePollingEarly(t *testing.T) {
	env := newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Pending("waiting for CI")}})
	vote := voteAt(env.TestWorkflowEnvironment, 90*time.Second, approval.Vote{Gate: "checks", Kind: approval.Approve, By: " alice ", Comment: "CI is flaky, ship it"})
	waiting := stateAt(t, env.TestWorkflowEnvironment, 30*time.Second)
	out, st := env.run(t, polledCase{Req: gates.Request{Type: "ci", PollInterval: time.Minute, AllowManual: true}})

	// The Web UI details say how the gate stands and how to decide it.
	md := detailsMarkdown(waiting, waiting.StartedAt)
	assert.Contains(t, md, "- **Polled gate `checks`**: ci, 1 poll every 1m0s, no deadline, last: waiting for CI. Decide early: `flowctl approve "+st.ID+" checks`")
	assert.Contains(t, md, "| checks | gate | running |")

	res := vote.vote(t)
	assert.Equal(t, approval.VoteStatus(approval.Approved), res.Status)
	require.NotNil(t, res.Decision)
	assert.Equal(t, "alice", res.Decision.By)
	assert.Empty(t, out.Err)
	assert.Equal(t, gates.Result{Outcome: gates.OutcomeApproved, By: "alice", Manual: true, Comment: "CI is flaky, ship it",
		Message: "waiting for CI", Polls: 2, DecidedAt: out.Res.DecidedAt}, out.Res)
	assert.Equal(t, 2, env.polls, "polls at 0s and 60s; the vote at 90s woke the sleep")
	s := gateStep(t, st)
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, int64(90_000), s.DurationMS, "the gate ended at the vote, not at the next poll")
	assert.Equal(t, "approved by alice (manual) after 2 polls: CI is flaky, ship it", s.Output)
	assert.True(t, s.Gate.Manual)
	assert.Equal(t, "alice", s.Gate.By)
}

func TestGateManualRejectAndEarlyVote(t *testing.T) {
	// A rejection with a reason.
	env := newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Pending("")}})
	voteAt(env.TestWorkflowEnvironment, 30*time.Second, approval.Vote{Gate: "checks", Kind: approval.Reject, By: "bob", Comment: "release frozen"})
	late := voteAt(env.TestWorkflowEnvironment, 40*time.Second, approval.Vote{Gate: "checks", Kind: approval.Approve, By: "alice"})
	changes := voteAt(env.TestWorkflowEnvironment, 10*time.Second, approval.Vote{Gate: "checks", Kind: approval.RequestChanges, By: "carol", Comment: "x"})
	out, st := env.run(t, polledCase{Req: gates.Request{Type: "ci", PollInterval: time.Minute, AllowManual: true}, After: time.Minute})
	assert.True(t, out.Rejected)
	assert.Equal(t, "release frozen", out.Reason)
	assert.Equal(t, "gate checks: rejected by bob (manual) after 1 poll: release frozen", out.Err)
	assert.Contains(t, changes.refusal(t).Error(), "request_changes does not apply")
	assert.Contains(t, late.refusal(t).Error(), "the gate was already rejected by bob")
	s := gateStep(t, st)
	assert.Equal(t, "bob", s.Gate.By)
	assert.Equal(t, "release frozen", s.Gate.Reason)

	// A vote sent before the run reached the gate decides it when it opens, before any poll.
	env = newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Pending("")}})
	early := voteAt(env.TestWorkflowEnvironment, 10*time.Second, approval.Vote{Gate: "checks", Kind: approval.Approve, By: "alice"})
	out, _ = env.run(t, polledCase{Req: gates.Request{Type: "ci", AllowManual: true}, Before: time.Minute})
	assert.Equal(t, approval.VoteQueued, early.vote(t).Status)
	assert.Equal(t, gates.OutcomeApproved, out.Res.Outcome)
	assert.Equal(t, "alice", out.Res.By)
	assert.Zero(t, out.Res.Polls)
	assert.Zero(t, env.polls)
}

func TestGateManualVoteRefusedWithoutAllowManual(t *testing.T) {
	env := newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Pending(""), gates.Pending(""), gates.Approved("green")}})
	vote := voteAt(env.TestWorkflowEnvironment, 15*time.Second, approval.Vote{Gate: "checks", Kind: approval.Approve, By: "alice"})
	out, st := env.run(t, polledCase{Req: gates.Request{Type: "ci", PollInterval: 10 * time.Second}})
	err := vote.refusal(t)
	assert.Contains(t, err.Error(), "approval checks: this is a polled gate (type ci) that its resolver decides; it does not allow a manual decision")
	assert.Equal(t, gates.Result{Outcome: gates.OutcomeApproved, By: "ci", Comment: "green", Polls: 3, DecidedAt: out.Res.DecidedAt}, out.Res)
	assert.Empty(t, st.Refused, "an Update refused by its Validator leaves no trace")

	// A vote that arrived before the gate opened is recorded as refused.
	env = newGateEnv(t, &scriptedResolver{typ: "ci", answers: []gates.Poll{gates.Approved("")}})
	voteAt(env.TestWorkflowEnvironment, time.Second, approval.Vote{Gate: "checks", Kind: approval.Approve, By: "alice"})
	out, st = env.run(t, polledCase{Req: gates.Request{Type: "ci"}, Before: time.Minute})
	assert.Equal(t, "ci", out.Res.By)
	require.Len(t, st.Refused, 1)
	assert.Contains(t, st.Refused[0].Reason, "does not allow a manual decision")
}

func TestGateFailedPollsAndBadParams(t *testing.T) {
	boom := errors.New("connection reset")
	r := &scriptedResolver{typ: "ci", errs: []error{boom}}
	env := newGateEnv(t, r)
	out, st := env.run(t, polledCase{Req: gates.Request{Type: "ci", PollInterval: 5 * time.Second}})
	assert.True(t, out.Step)
	assert.Contains(t, out.Err, "gate checks: 5 polls in a row failed; the last: gate checks: poll 5 with ci: connection reset")
	assert.Len(t, r.polls(), 5*3, "each failed poll is an activity tried 3 times")
	s := gateStep(t, st)
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Equal(t, 5, s.Gate.Polls)
	assert.Equal(t, 5, s.Gate.FailedPolls)

	// A failed poll between pending ones only delays the gate.
	r = &scriptedResolver{typ: "ci", answers: []gates.Poll{{}, {}, {}, gates.Pending("p"), gates.Approved("ok")},
		errs: []error{boom, boom, boom, nil, nil}} // poll 1 fails its 3 attempts
	env = newGateEnv(t, r)
	out, _ = env.run(t, polledCase{Req: gates.Request{Type: "ci", PollInterval: 5 * time.Second}})
	assert.Empty(t, out.Err)
	assert.Equal(t, 3, out.Res.Polls)

	// Params the resolver refuses fail the gate at once, without retries.
	r = &scriptedResolver{typ: "ci", errs: []error{&gates.ParamsError{Type: "ci", Reason: "pipeline is missing"}}}
	env = newGateEnv(t, r)
	out, _ = env.run(t, polledCase{Req: gates.Request{Type: "ci"}})
	assert.True(t, out.Invalid)
	assert.Contains(t, out.Err, "gate ci: bad params: pipeline is missing")
	assert.Len(t, r.polls(), 1)

	// So does a resolver's answer that is not a poll state.
	r = &scriptedResolver{typ: "ci", answers: []gates.Poll{{State: "maybe"}}}
	env = newGateEnv(t, r)
	out, _ = env.run(t, polledCase{Req: gates.Request{Type: "ci"}})
	assert.True(t, out.Invalid)
	assert.Contains(t, out.Err, `the ci resolver answered a bad poll: poll state "maybe"`)
}

func TestWorkerRefusesBadGateResolvers(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{GateResolvers: []gates.Resolver{&scriptedResolver{typ: ""}, &scriptedResolver{typ: "http"}}})
	err := w.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gate resolvers: gate resolver *flow.scriptedResolver has an empty type")
	assert.Contains(t, err.Error(), `gate resolver type "http" is registered twice (http is built in)`)
	assert.Error(t, w.Start(), "Start validates first")
	assert.NoError(t, NewWorker(nil, WorkerOptions{GateResolvers: []gates.Resolver{&scriptedResolver{typ: "ci"}}}).Validate())
}

func TestWorkerRefusesAFlowWhoseGateTypesItCannotServe(t *testing.T) {
	f := Define("unit/uses-gates", func(ctx *Context, _ none) (none, error) { return none{}, nil },
		UsesGates("http", "pr_checks", "http"))
	require.NoError(t, f.Err())
	assert.Equal(t, []string{"http", "pr_checks"}, f.Info().GateTypes, "declared once each")

	err := NewWorker(nil, WorkerOptions{}, f).Validate()
	require.Error(t, err)
	assert.Equal(t, `flow unit/uses-gates uses gate type "pr_checks", which no gate resolver of this worker serves `+
		`(registered: command, http; add it to WorkerOptions.GateResolvers)`, err.Error())
	assert.NoError(t, NewWorker(nil, WorkerOptions{GateResolvers: []gates.Resolver{&scriptedResolver{typ: "pr_checks"}}}, f).Validate())

	bad := Define("unit/uses-blank-gate", func(ctx *Context, _ none) (none, error) { return none{}, nil }, UsesGates(" "))
	require.Error(t, bad.Err())
	assert.Contains(t, bad.Err().Error(), "a gate type is blank")
}
