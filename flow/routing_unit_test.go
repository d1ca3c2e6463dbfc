package flow

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
)

// routeOut is what a routing test flow saw.
type routeOut struct {
	Stdout  string   `json:"stdout"`
	Err     string   `json:"err"`
	Allowed bool     `json:"allowed"`
	Goto    bool     `json:"goto"`
	Failed  []string `json:"failed"` // the step error handler's calls: "step allowed"
}

// routeIn is a routing test flow's input: the step's command and its routes by name.
type routeIn struct {
	Command   string `json:"command"`
	OnFailure string `json:"on_failure"` // continue, halt, fallback, fallback-http, goto:LABEL
	OnTimeout string `json:"on_timeout"`
	MaxVisits int    `json:"max_visits"`
}

func namedRoute(s string) Route {
	switch {
	case s == "continue":
		return Continue
	case s == "halt":
		return Halt
	case s == "fallback":
		return Fallback(activities.Shell{Command: "alt"})
	case s == "fallback-fails":
		return Fallback(activities.Shell{Command: "fail"})
	case s == "fallback-http":
		return Fallback(activities.HTTP{URL: "http://localhost/x"})
	case strings.HasPrefix(s, "goto:"):
		return Goto(strings.TrimPrefix(s, "goto:"))
	}
	return nil
}

func routeOpts(in routeIn) []StepOption {
	var opts []StepOption
	if in.OnFailure != "" {
		opts = append(opts, OnFailure(namedRoute(in.OnFailure)))
	}
	if in.OnTimeout != "" {
		opts = append(opts, OnTimeout(namedRoute(in.OnTimeout)))
	}
	return opts
}

func outcomeOf(out *routeOut, res activities.ShellResult, err error) {
	out.Stdout = res.Stdout
	if err != nil {
		out.Err = err.Error()
		var af *AllowedFailure
		out.Allowed = errors.As(err, &af)
		var ge *GotoError
		out.Goto = errors.As(err, &ge)
	}
}

// routedFlow runs one shell step "build" with the input's routes.
var routedFlow = Define("unit/routed", func(ctx *Context, in routeIn) (routeOut, error) {
	var out routeOut
	ctx.OnStepError(func(_ *Context, f StepFailure) {
		out.Failed = append(out.Failed, f.Step+" "+strconv.FormatBool(f.Allowed))
	})
	res, err := ctx.Shell("build", activities.Shell{Command: in.Command}, routeOpts(in)...)
	outcomeOf(&out, res, err)
	return out, err
})

// labelFlow runs the step "build" inside the label "build".
var labelFlow = Define("unit/label", func(ctx *Context, in routeIn) (routeOut, error) {
	var out routeOut
	var opts []LabelOption
	if in.MaxVisits != 0 {
		opts = append(opts, MaxVisits(in.MaxVisits))
	}
	err := ctx.Label("build", func(c *Context) error {
		res, err := c.Shell("build", activities.Shell{Command: in.Command}, routeOpts(in)...)
		outcomeOf(&out, res, err)
		return err
	}, opts...)
	if err != nil {
		out.Err = err.Error()
	}
	return out, err
})

// nestedLabels: the label deploy holds the label test; "unit" goes back to test,
// "smoke" back to deploy.
var nestedLabels = Define("unit/nested-labels", func(ctx *Context, _ none) (none, error) {
	err := ctx.Label("deploy", func(c *Context) error {
		if _, err := c.Shell("push", activities.Shell{Command: "push"}); err != nil {
			return err
		}
		if err := c.Label("test", func(c *Context) error {
			_, err := c.Shell("unit", activities.Shell{Command: "count:unit:2"}, OnFailure(Goto("test")))
			return err
		}); err != nil {
			return err
		}
		_, err := c.Shell("smoke", activities.Shell{Command: "count:smoke:2"}, OnFailure(Goto("deploy")))
		return err
	})
	return none{}, err
})

// routingShell answers the routing tests' shell steps: "fail" exits 1, "timeout" is
// killed at its timeout, "count:KEY:N" fails until its Nth call, anything else succeeds
// printing its command.
func routingShell(env *testsuite.TestWorkflowEnvironment) *callLog[activities.Shell] {
	var mu sync.Mutex
	calls := map[string]int{}
	return mockShell(env, func(s activities.Shell) (activities.ShellResult, error) {
		switch {
		case s.Command == "fail":
			return activities.ShellResult{}, shellExit(1, "broken")
		case s.Command == "timeout":
			return activities.ShellResult{}, temporal.NewApplicationError("shell: timed out after 1s: ", activities.ShellTimeoutErrorType,
				activities.ShellFailure{ExitCode: -1, Attempt: 1})
		case strings.HasPrefix(s.Command, "count:"):
			parts := strings.Split(s.Command, ":")
			n, _ := strconv.Atoi(parts[2])
			mu.Lock()
			calls[parts[1]]++
			c := calls[parts[1]]
			mu.Unlock()
			if c < n {
				return activities.ShellResult{}, shellExit(1, "not yet "+strconv.Itoa(c))
			}
		}
		return activities.ShellResult{Stdout: s.Command + " ok", Attempt: 1}, nil
	})
}

func runRouted(t *testing.T, f Definition, in any) (*testsuite.TestWorkflowEnvironment, *callLog[activities.Shell], runs.State, routeOut, error) {
	t.Helper()
	env := newUnitEnv(t, runConfig{}, f)
	calls := routingShell(env)
	env.ExecuteWorkflow(f.Name(), in)
	require.True(t, env.IsWorkflowCompleted())
	var out routeOut
	if env.GetWorkflowError() == nil {
		require.NoError(t, env.GetWorkflowResult(&out))
	}
	return env, calls, queryState(t, env), out, env.GetWorkflowError()
}

func TestRoutingContinueAllowsTheFailure(t *testing.T) {
	_, calls, st, out, err := runRouted(t, routedFlow, routeIn{Command: "fail", OnFailure: "continue"})
	require.NoError(t, err)
	assert.Equal(t, runs.StatusWarning, st.Status)
	assert.True(t, out.Allowed, "the handler got an *AllowedFailure: %s", out.Err)
	assert.Empty(t, out.Stdout, "the zero result")
	assert.Equal(t, []string{"build true"}, out.Failed, "the step error handler sees an allowed failure")
	require.Len(t, st.Steps, 1)
	assert.Equal(t, runs.StepFailed, st.Steps[0].Status)
	assert.True(t, st.Steps[0].AllowedFailure)
	assert.Equal(t, "continue", st.Steps[0].Route)
	assert.Equal(t, "failed (allowed)", st.Steps[0].StatusText())
	assert.Len(t, calls.all(), 1)
}

func TestRoutingFallbackResultIsTheStepsResult(t *testing.T) {
	_, calls, st, out, err := runRouted(t, routedFlow, routeIn{Command: "fail", OnFailure: "fallback"})
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Equal(t, "alt ok", out.Stdout, "the fallback's result")
	assert.Empty(t, out.Err)
	assert.Equal(t, []string{"build false"}, out.Failed, "the failed step still calls the step error handler")
	assert.Equal(t, []string{"fail", "alt"}, commands(calls.all()))
	require.Len(t, st.Steps, 2)
	assert.Equal(t, runs.StepFailed, st.Steps[0].Status)
	assert.Equal(t, "fallback build/fallback", st.Steps[0].Route)
	assert.Equal(t, "failed, fallback build/fallback", st.Steps[0].StatusText())
	assert.Equal(t, "build/fallback", st.Steps[1].Name)
	assert.Equal(t, runs.StepCompleted, st.Steps[1].Status)
	assert.Equal(t, "alt ok", st.Steps[1].Output)

	t.Run("a failing fallback fails the step with its error", func(t *testing.T) {
		_, _, st, _, err := runRouted(t, routedFlow, routeIn{Command: "fail", OnFailure: "fallback-fails"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "step build/fallback: exit code 1: broken")
		assert.Equal(t, runs.StatusFailed, st.Status)
		require.Len(t, st.Steps, 2)
		assert.Equal(t, runs.StepFailed, st.Steps[1].Status)
		assert.Empty(t, st.Steps[1].Route, "a fallback's failure is not routed again")
	})
	t.Run("a step that succeeds runs no fallback", func(t *testing.T) {
		_, calls, st, out, err := runRouted(t, routedFlow, routeIn{Command: "ok", OnFailure: "fallback"})
		require.NoError(t, err)
		assert.Equal(t, "ok ok", out.Stdout)
		assert.Len(t, st.Steps, 1)
		assert.Len(t, calls.all(), 1)
	})
}

var agentFallbackFlow = Define("unit/agent-fallback", func(ctx *Context, _ none) (string, error) {
	res, err := ctx.Agent("review", activities.Agent{Prompt: "review", Model: "scripted/a"},
		OnFailure(Fallback(activities.Agent{Prompt: "review", Model: "scripted/b"})))
	return res.Text, err
})

func TestRoutingFallbackAgent(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, agentFallbackFlow)
	calls := mockAgent(env, func(a activities.Agent) (activities.AgentResult, error) {
		if a.Model == "scripted/a" {
			return activities.AgentResult{}, temporal.NewNonRetryableApplicationError("model a is down", activities.AgentAPIErrorType, nil)
		}
		return activities.AgentResult{Text: "looks good", Attempt: 1}, nil
	})
	env.ExecuteWorkflow(agentFallbackFlow.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var text string
	require.NoError(t, env.GetWorkflowResult(&text))
	assert.Equal(t, "looks good", text)
	require.Len(t, calls.all(), 2)
	assert.Equal(t, "scripted/b", calls.all()[1].Model)
	st := queryState(t, env)
	require.Len(t, st.Steps, 2)
	assert.Equal(t, runs.KindAgent, st.Steps[1].Kind)
	assert.Equal(t, "review/fallback", st.Steps[1].Name)
}

// waiting is a custom activity the tests mock.
func waiting(_ context.Context, s string) (int, error) { return len(s), nil }

func registerWaiting(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(waiting, activity.RegisterOptions{Name: "Waiting"})
}

var customFallbackFlow = Define("unit/custom-fallback", func(ctx *Context, _ none) (int, error) {
	return Step[int](ctx.With(OnFailure(Fallback(activities.Shell{Command: "alt"}))), "count", "Waiting", "a b")
})

var parallelGotoFlow = Define("unit/parallel-goto", func(ctx *Context, _ none) (none, error) {
	_, err := ctx.Parallel("pair", WaitAll,
		ShellStep("a", activities.Shell{Command: "ok"}, OnFailure(Goto("x"))),
		ShellStep("b", activities.Shell{Command: "fail"}, OnFailure(Continue)))
	return none{}, err
})

func TestRoutingRefusesRoutesThatCannotApplyBeforeDispatch(t *testing.T) {
	t.Run("fallback of another kind", func(t *testing.T) {
		_, calls, st, _, err := runRouted(t, routedFlow, routeIn{Command: "fail", OnFailure: "fallback-http"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "fallback of step build: the step is a shell step, its fallback a http step; a fallback must be of the step's kind")
		assert.Contains(t, err.Error(), "type: "+string(ErrorInvalidStep))
		assert.Empty(t, calls.all(), "nothing was dispatched")
		require.Len(t, st.Steps, 1)
		assert.Equal(t, runs.StepFailed, st.Steps[0].Status)
	})
	t.Run("fallback of a custom step", func(t *testing.T) {
		env := newUnitEnv(t, runConfig{}, customFallbackFlow)
		registerWaiting(env)
		started := startedActivities(env)
		env.ExecuteWorkflow(customFallbackFlow.Name(), none{})
		require.Error(t, env.GetWorkflowError())
		assert.Contains(t, env.GetWorkflowError().Error(), "fallback of step count: a activity step has no fallback")
		assert.Empty(t, started.all())
	})
	t.Run("Goto in Parallel; Continue applies there", func(t *testing.T) {
		_, calls, st, _, err := runRouted(t, parallelGotoFlow, none{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "step a of Parallel pair: Fallback and Goto routes do not apply in Parallel")
		assert.Equal(t, []string{"fail"}, commands(calls.all()), "a was refused; b ran")
		b := st.Steps[1]
		assert.Equal(t, "b", b.Name)
		assert.True(t, b.AllowedFailure, "Continue applies in Parallel")
	})
	t.Run("SkipDependents and nil are not routes", func(t *testing.T) {
		f := Define("unit/bad-route", func(ctx *Context, _ none) (none, error) {
			_, err1 := ctx.Shell("a", activities.Shell{Command: "ok"}, OnFailure(SkipDependents))
			_, err2 := ctx.Shell("b", activities.Shell{Command: "ok"}, OnTimeout(nil))
			return none{}, errors.Join(err1, err2)
		})
		_, calls, _, _, err := runRouted(t, f, none{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "step a: OnFailure: fan-out policy 2 (SkipDependents) is not a step route")
		assert.Contains(t, err.Error(), "step b: OnTimeout: the route is nil")
		assert.Empty(t, calls.all())
	})
}

func TestGotoReentersTheLabelAtMostMaxVisitsTimes(t *testing.T) {
	t.Run("passes on the third visit", func(t *testing.T) {
		_, calls, st, out, err := runRouted(t, labelFlow, routeIn{Command: "count:b:3", OnFailure: "goto:build", MaxVisits: 3})
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCompleted, st.Status)
		assert.Equal(t, "count:b:3 ok", out.Stdout)
		assert.Len(t, calls.all(), 3)
		require.Len(t, st.Steps, 3)
		assert.Equal(t, []string{"build", "build#2", "build#3"}, []string{st.Steps[0].ActivityID, st.Steps[1].ActivityID, st.Steps[2].ActivityID})
		assert.Equal(t, "goto build (2 of 3)", st.Steps[0].Route)
		assert.Equal(t, "goto build (3 of 3)", st.Steps[1].Route)
		assert.Equal(t, "failed, goto build (2 of 3)", st.Steps[0].StatusText())
		assert.Equal(t, runs.StepCompleted, st.Steps[2].Status)
		assert.Equal(t, []runs.Label{{Name: "build", Visits: 3, MaxVisits: 3, Reentries: 2, LastStep: "build"}}, st.Labels)
	})
	t.Run("gives up after MaxVisits with the step's error", func(t *testing.T) {
		_, calls, st, _, err := runRouted(t, labelFlow, routeIn{Command: "count:b:3", OnFailure: "goto:build", MaxVisits: 2})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "goto build: visited 2 times (max 2): step build: exit code 1: not yet 2")
		assert.True(t, ErrorGoto.Is(err), "the run fails with the stable type: %v", err)
		assert.Equal(t, runs.StatusFailed, st.Status)
		assert.Len(t, calls.all(), 2)
		require.Len(t, st.Steps, 2)
		assert.Equal(t, "goto build (limit of 2 visits reached)", st.Steps[1].Route)
		assert.Equal(t, []runs.Label{{Name: "build", Visits: 2, MaxVisits: 2, Reentries: 1, LastStep: "build"}}, st.Labels)
	})
	t.Run("default is three visits", func(t *testing.T) {
		_, calls, _, _, err := runRouted(t, labelFlow, routeIn{Command: "fail", OnFailure: "goto:build"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "goto build: visited 3 times (max 3)")
		assert.Len(t, calls.all(), 3)
	})
	t.Run("a bad MaxVisits runs nothing", func(t *testing.T) {
		_, calls, _, _, err := runRouted(t, labelFlow, routeIn{Command: "fail", OnFailure: "goto:build", MaxVisits: MaxLabelVisits + 1})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "label build: MaxVisits 101: want 1 to 100")
		assert.Empty(t, calls.all())
	})
}

func TestGotoNestedLabels(t *testing.T) {
	_, calls, st, _, err := runRouted(t, nestedLabels, none{})
	require.NoError(t, err)
	// push, unit (fails), unit, smoke (fails) -> deploy again: push, unit (passes now), smoke.
	assert.Equal(t, []string{"push", "count:unit:2", "count:unit:2", "count:smoke:2", "push", "count:unit:2", "count:smoke:2"}, commands(calls.all()))
	assert.Equal(t, runs.StatusCompleted, st.Status)
	assert.Equal(t, []runs.Label{
		{Name: "deploy", Visits: 2, MaxVisits: 3, Reentries: 1, LastStep: "smoke"},
		{Name: "test", Visits: 1, MaxVisits: 3, Reentries: 1, LastStep: "unit"},
	}, st.Labels, "test's latest entry (in deploy's second visit) ran once; it was re-entered once in all")
	assert.Equal(t, "goto test (2 of 3)", stepNamed(st.Steps, "unit").Route)
	assert.Equal(t, "goto deploy (2 of 3)", stepNamed(st.Steps, "smoke").Route)
}

func stepNamed(steps []runs.Step, name string) runs.Step {
	for _, s := range steps {
		if s.Name == name {
			return s
		}
	}
	return runs.Step{}
}

func TestGotoUnknownLabelFailsTheRunNamingIt(t *testing.T) {
	_, calls, st, _, err := runRouted(t, routedFlow, routeIn{Command: "fail", OnFailure: "goto:nowhere"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `goto nowhere: no enclosing label "nowhere" (ctx.Label) caught the failure of step build: exit code 1: broken`)
	assert.True(t, ErrorGoto.Is(err), "%v", err)
	assert.Equal(t, runs.StatusFailed, st.Status)
	assert.Equal(t, 1, st.Attempt)
	assert.Len(t, calls.all(), 1)
	assert.Equal(t, "goto nowhere (no enclosing label)", st.Steps[0].Route)
}

func TestOnTimeoutWinsOverOnFailureForTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name, command, onFailure, onTimeout string
		wantErr                             string
		wantRoute, wantStatusText           string
		wantStatus                          runs.Status
	}{
		{"timeout takes OnTimeout", "timeout", "fallback", "continue", "", "continue", "timed_out (allowed)", runs.StatusWarning},
		{"failure takes OnFailure", "fail", "fallback", "continue", "", "fallback build/fallback", "failed, fallback build/fallback", runs.StatusCompleted},
		{"timeout without OnTimeout takes OnFailure", "timeout", "continue", "", "", "continue", "timed_out (allowed)", runs.StatusWarning},
		{"OnTimeout(Halt) fails a timeout", "timeout", "continue", "halt", "step build: shell: timed out", "", "timed_out", runs.StatusFailed},
		{"OnTimeout does not route failures", "fail", "", "continue", "step build: exit code 1", "", "failed", runs.StatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, st, _, err := runRouted(t, routedFlow, routeIn{Command: tc.command, OnFailure: tc.onFailure, OnTimeout: tc.onTimeout})
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tc.wantStatus, st.Status)
			assert.Equal(t, tc.wantRoute, st.Steps[0].Route)
			assert.Equal(t, tc.wantStatusText, st.Steps[0].StatusText())
		})
	}
}

// timeoutFlow runs one custom activity step that fails with the input's timeout type.
var timeoutFlow = Define("unit/timed-out", func(ctx *Context, in routeIn) (routeOut, error) {
	var out routeOut
	ctx.OnStepError(func(_ *Context, f StepFailure) { out.Failed = append(out.Failed, f.Step) })
	_, err := Step[int](ctx.With(routeOpts(in)...), "wait", "Waiting", in.Command)
	if err != nil {
		out.Err = err.Error()
	}
	return out, err
})

func TestTimedOutIsRecordedWithItsTimeoutTypeAndFailsLikeAFailure(t *testing.T) {
	for _, tc := range []struct {
		tt   enumspb.TimeoutType
		want string
	}{
		{enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, "schedule_to_start"},
		{enumspb.TIMEOUT_TYPE_START_TO_CLOSE, "start_to_close"},
		{enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, "schedule_to_close"},
		{enumspb.TIMEOUT_TYPE_HEARTBEAT, "heartbeat"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			env := newUnitEnv(t, runConfig{}, timeoutFlow)
			registerWaiting(env)
			env.OnActivity("Waiting", mock.Anything, mock.Anything).Return(0, temporal.NewTimeoutError(tc.tt, nil))
			env.ExecuteWorkflow(timeoutFlow.Name(), routeIn{Command: "x"})
			require.Error(t, env.GetWorkflowError())
			st := queryState(t, env)
			assert.Equal(t, runs.StatusFailed, st.Status, "a timed_out step fails the run as a failed one does")
			require.Len(t, st.Steps, 1)
			assert.Equal(t, runs.StepTimedOut, st.Steps[0].Status)
			assert.Equal(t, tc.want, st.Steps[0].Timeout)
			assert.Equal(t, "timed out ("+tc.want+")", st.Steps[0].Error)
		})
	}
	t.Run("the step error handler runs; OnTimeout(Continue) allows it", func(t *testing.T) {
		env := newUnitEnv(t, runConfig{}, timeoutFlow)
		registerWaiting(env)
		env.OnActivity("Waiting", mock.Anything, mock.Anything).Return(0,
			temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil))
		env.ExecuteWorkflow(timeoutFlow.Name(), routeIn{Command: "x", OnTimeout: "continue"})
		require.NoError(t, env.GetWorkflowError())
		var out routeOut
		require.NoError(t, env.GetWorkflowResult(&out))
		assert.Equal(t, []string{"wait"}, out.Failed)
		st := queryState(t, env)
		assert.Equal(t, runs.StatusWarning, st.Status)
		assert.Equal(t, "timed_out (allowed)", st.Steps[0].StatusText())
	})
	t.Run("the step error handler runs for a timed_out step that fails the run", func(t *testing.T) {
		f := Define("unit/timed-out-handler", func(ctx *Context, _ none) ([]string, error) {
			var failed []string
			ctx.OnStepError(func(_ *Context, f StepFailure) { failed = append(failed, f.Step+" "+f.Error) })
			_, err := Step[int](ctx, "wait", "Waiting", "x")
			return failed, Permanent(err)
		})
		env := newUnitEnv(t, runConfig{}, f)
		registerWaiting(env)
		env.OnActivity("Waiting", mock.Anything, mock.Anything).Return(0,
			temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil))
		env.ExecuteWorkflow(f.Name(), none{})
		require.Error(t, env.GetWorkflowError())
		st := queryState(t, env)
		assert.JSONEq(t, `["wait timed out (heartbeat)"]`, string(st.Output))
	})
}

func TestHTTPStepsOwnTimeoutIsTimedOut(t *testing.T) {
	f := Define("unit/http-timeout", func(ctx *Context, _ none) (none, error) {
		_, err := ctx.HTTP("call", activities.HTTP{URL: "http://localhost/x"}, Retry(temporal.RetryPolicy{MaximumAttempts: 1}))
		return none{}, err
	})
	for _, tc := range []struct {
		timedOut bool
		status   runs.StepStatus
		timeout  string
	}{{true, runs.StepTimedOut, "start_to_close"}, {false, runs.StepFailed, ""}} {
		env := newUnitEnv(t, runConfig{}, f)
		env.OnActivity(activities.HTTPActivity, mock.Anything, mock.Anything).Return(
			func(context.Context, activities.HTTP) (activities.HTTPResult, error) {
				return activities.HTTPResult{}, temporal.NewApplicationErrorWithOptions("GET http://localhost/x: timed out after 1s",
					activities.HTTPTransportErrorType, temporal.ApplicationErrorOptions{
						Details: []any{activities.HTTPFailure{Attempt: 1, TimedOut: tc.timedOut}}})
			})
		env.ExecuteWorkflow(f.Name(), none{})
		require.Error(t, env.GetWorkflowError())
		st := queryState(t, env)
		assert.Equal(t, tc.status, st.Steps[0].Status)
		assert.Equal(t, tc.timeout, st.Steps[0].Timeout)
	}
}
