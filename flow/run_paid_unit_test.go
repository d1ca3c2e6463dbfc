package flow

import (
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/budget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// badJSON is the agent activity's error for a paid answer that is not JSON.
func badJSON(cost string, in, out int64) error {
	return temporal.NewApplicationError("agent: the answer is not JSON (invalid character 'o'): oops",
		activities.AgentBadJSONErrorType, activities.AgentResult{CostUSD: dec(cost), CostKnown: true,
			Usage: llm.Usage{InputTokens: in, OutputTokens: out}})
}

func TestPaidStepChargesEveryAttempt(t *testing.T) {
	f := Define("unit/paid", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m", ResponseSchema: []byte(`{"type":"object"}`)})
		return a.Text, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	n := 0
	calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		n++
		if n <= 2 {
			return activities.AgentResult{}, badJSON("0.0123", 100, 10)
		}
		return activities.AgentResult{Text: `{"ok":true}`, CostUSD: dec("0.0101"), CostKnown: true,
			Usage: llm.Usage{InputTokens: 90, OutputTokens: 9}}, nil
	})
	started := startedActivities(env)
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Len(t, calls.all(), 3)
	var ids []string
	for _, a := range started.all() {
		if a.ActivityType.Name == activities.AgentActivity {
			ids = append(ids, a.ActivityID)
			assert.Equal(t, int32(1), a.Attempt, "each attempt is its own activity, never retried by Temporal")
		}
	}
	assert.Equal(t, []string{"summarize", "summarize@2", "summarize@3"}, ids)
	st := queryState(t, env)
	s := stepByName(t, st, "summarize")
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, 3, s.Attempt)
	require.Len(t, s.Attempts, 3)
	assert.Equal(t, "0.0123", s.Attempts[0].CostUSD.String())
	assert.Contains(t, s.Attempts[0].Error, "not JSON")
	assert.Equal(t, "", s.Attempts[2].Error)
	assert.Equal(t, "0.0347", s.CostUSD.String(), "0.0123 + 0.0123 + 0.0101, exactly")
	assert.Equal(t, "0.0347", st.CostUSD.String())
	assert.Equal(t, runs.Tokens{Input: 290, Output: 29}, st.Tokens)
	assert.Equal(t, "0.0347", st.Budget.Spent.String(), "the run's ledger has every attempt")
}

func TestPaidStepDoesNotMakeAnAttemptTheCapCannotPay(t *testing.T) {
	// Each attempt reserves $0.10; the cap of $0.25 pays for two attempts that cost $0.09.
	f := Define("unit/paid-cap", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.10")})
		return a.Text, err
	}, MaxCostUSD(dec("0.25")))
	env := newUnitEnv(t, runConfig{}, f)
	calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{}, badJSON("0.09", 10, 10)
	})
	env.ExecuteWorkflow(f.Name(), none{})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.True(t, ErrorBudgetExceeded.Is(err), "the run ends budget_exceeded: %v", err)
	assert.Len(t, calls.all(), 2, "the third attempt is not made")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusBudgetExceeded, st.Status)
	s := stepByName(t, st, "summarize")
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Contains(t, s.Error, "attempt 3 not made")
	require.Len(t, s.Attempts, 2)
	assert.Equal(t, "0.18", s.CostUSD.String())
	assert.Equal(t, "0.18", st.Budget.Spent.String())
	assert.True(t, st.Budget.Reserved.IsZero(), "nothing stays reserved: %s", st.Budget.Reserved)
}

func TestPaidStepWaitsForCapacityWithoutUsingAttempts(t *testing.T) {
	f := Define("unit/paid-429", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m"}, Retry(temporal.RetryPolicy{MaximumAttempts: 1}))
		return a.Text, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	n := 0
	var statuses []runs.Status
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		n++
		if n <= 2 {
			return activities.AgentResult{}, temporal.NewApplicationErrorWithOptions("agent: rate limited", activities.AgentRateLimitedErrorType,
				temporal.ApplicationErrorOptions{NextRetryDelay: 2 * time.Second})
		}
		return activities.AgentResult{Text: "done", CostUSD: dec("0.01"), CostKnown: true}, nil
	})
	env.RegisterDelayedCallback(func() { statuses = append(statuses, queryState(t, env).Status) }, time.Second)
	start := env.Now()
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []runs.Status{runs.StatusWaitingCapacity}, statuses)
	assert.GreaterOrEqual(t, env.Now().Sub(start), 4*time.Second, "two waits of the provider's Retry-After")
	st := queryState(t, env)
	s := stepByName(t, st, "summarize")
	assert.Equal(t, runs.StepCompleted, s.Status, "one attempt allowed, and the rate limits did not use it")
	assert.Equal(t, 1, s.Attempt)
	require.Len(t, s.Attempts, 1)
	assert.Equal(t, int64(4000), s.Attempts[0].WaitedMS)
}

func TestPaidStepRateLimitedPastItsTimeoutFails(t *testing.T) {
	f := Define("unit/paid-429-timeout", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m"}, StepTimeout(5*time.Second))
		return a.Text, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{}, temporal.NewApplicationErrorWithOptions("agent: rate limited", activities.AgentRateLimitedErrorType,
			temporal.ApplicationErrorOptions{NextRetryDelay: 2 * time.Second})
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	assert.Len(t, calls.all(), 3, "waits of 2s and 2s fit the 5s timeout, a third does not")
	s := stepByName(t, queryState(t, env), "summarize")
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Contains(t, s.Error, "still rate limiting after 4s")
}

func TestPaidStepHonoursTheRetryPolicy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		retry *temporal.RetryPolicy
		calls int
	}{
		{"non-retryable error", temporal.NewNonRetryableApplicationError("agent: bad request", activities.AgentAPIErrorType, nil), nil, 1},
		{"non-retryable type", badJSON("0.01", 1, 1), &temporal.RetryPolicy{MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.AgentBadJSONErrorType}}, 1},
		{"default attempts", badJSON("0.01", 1, 1), nil, DefaultStepAttempts},
		{"five attempts", badJSON("0.01", 1, 1), &temporal.RetryPolicy{MaximumAttempts: 5}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []StepOption
			if tc.retry != nil {
				opts = append(opts, Retry(*tc.retry))
			}
			f := Define("unit/paid-policy", func(ctx *Context, _ none) (string, error) {
				a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m"}, opts...)
				return a.Text, err
			})
			env := newUnitEnv(t, runConfig{}, f)
			calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) { return activities.AgentResult{}, tc.err })
			env.ExecuteWorkflow(f.Name(), none{})
			require.Error(t, env.GetWorkflowError())
			assert.Len(t, calls.all(), tc.calls)
			s := stepByName(t, queryState(t, env), "summarize")
			assert.Len(t, s.Attempts, tc.calls)
			assert.Equal(t, tc.calls, s.Attempt)
		})
	}
}

func TestPaidStepOvershootIsFlagged(t *testing.T) {
	f := Define("unit/paid-overshoot", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.25")})
		return a.Text, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{Text: "long", CostUSD: dec("0.45"), CostKnown: true, Overshoot: true}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	s := stepByName(t, queryState(t, env), "summarize")
	assert.True(t, s.Overshoot)
	require.NotNil(t, s.CostLimitUSD)
	assert.Equal(t, "$0.4500 > $0.25 limit", s.CostText())
}

func TestAgentWithoutALimitIsNeverAnOvershoot(t *testing.T) {
	f := Define("unit/no-limit", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m"})
		return a.Text, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{Text: "ok", CostUSD: dec("0.0009"), CostKnown: true}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	s := stepByName(t, queryState(t, env), "summarize")
	assert.False(t, s.Overshoot, "no MaxBudgetUSD, no CostLimit: nothing to overshoot")
	assert.Nil(t, s.CostLimitUSD)
	assert.Equal(t, "$0.0009", s.CostText())
}

func TestPaidStepBackoffIsJitteredAndDurable(t *testing.T) {
	f := Define("unit/paid-backoff", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m"},
			Retry(temporal.RetryPolicy{InitialInterval: 10 * time.Second, MaximumAttempts: 2}))
		return a.Text, err
	})
	env := newUnitEnv(t, runConfig{}, f)
	var at []time.Time
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		at = append(at, env.Now())
		if len(at) == 1 {
			return activities.AgentResult{}, badJSON("0.01", 1, 1)
		}
		return activities.AgentResult{Text: "ok"}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, at, 2)
	gap := at[1].Sub(at[0])
	assert.GreaterOrEqual(t, gap, 8*time.Second)
	assert.LessOrEqual(t, gap, 12*time.Second)
}

var _ = errors.New
var _ = budget.FormatUSD

// TestPaidAttemptLostInFlightIsChargedItsReservation: an attempt that never reported its
// cost (its worker died: a heartbeat timeout) may still have been billed by the provider,
// so it is charged its whole reservation, marked unconfirmed; the retry's own cost comes
// on top. Recorded spend is never below what the provider could have billed.
func TestPaidAttemptLostInFlightIsChargedItsReservation(t *testing.T) {
	f := Define("unit/paid-lost", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.15")})
		return a.Text, err
	}, MaxCostUSD(dec("1")))
	env := newUnitEnv(t, runConfig{}, f)
	n := 0
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		n++
		if n == 1 {
			return activities.AgentResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return activities.AgentResult{Text: "ok", CostUSD: dec("0.10"), CostKnown: true}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	st := queryState(t, env)
	s := stepByName(t, st, "summarize")
	require.Len(t, s.Attempts, 2)
	assert.True(t, s.Attempts[0].Unconfirmed, "the lost attempt is unconfirmed")
	assert.Equal(t, "0.15", s.Attempts[0].CostUSD.String(), "charged its reservation")
	assert.False(t, s.Attempts[1].Unconfirmed)
	assert.Equal(t, "0.25", s.CostUSD.String(), "0.15 unconfirmed + 0.10 reported")
	assert.Equal(t, "0.15", s.UnconfirmedUSD.String())
	assert.Equal(t, "0.25", st.Budget.Spent.String(), "the run's ledger holds the unconfirmed money too")
	assert.True(t, st.Budget.Reserved.IsZero(), "nothing stays reserved: %s", st.Budget.Reserved)
	assert.Equal(t, 1, s.Attempt, "the lost worker did not use up an attempt")
	assert.Contains(t, s.Attempts[0].Error, "worker lost, made again")
}

// TestPaidStepSurvivesLostWorkersWithOneAttempt: a step allowed one attempt still
// completes after two of its workers were lost; each lost try is charged its reservation.
func TestPaidStepSurvivesLostWorkersWithOneAttempt(t *testing.T) {
	f := Define("unit/paid-lost-twice", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.15")},
			Retry(temporal.RetryPolicy{MaximumAttempts: 1}))
		return a.Text, err
	}, MaxCostUSD(dec("1")))
	env := newUnitEnv(t, runConfig{}, f)
	n := 0
	calls := mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		n++
		if n <= 2 {
			return activities.AgentResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return activities.AgentResult{Text: "ok", CostUSD: dec("0.05"), CostKnown: true}, nil
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Len(t, calls.all(), 3)
	st := queryState(t, env)
	s := stepByName(t, st, "summarize")
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, "0.35", s.CostUSD.String(), "two lost tries at 0.15 and the last at 0.05")
	assert.Equal(t, "0.30", s.UnconfirmedUSD.StringFixed(2))
	assert.Equal(t, "0.35", st.Budget.Spent.String())
}

// TestPaidLastAttemptLostInFlightIsChargedToo: the same for the step's last attempt.
func TestPaidLastAttemptLostInFlightIsChargedToo(t *testing.T) {
	f := Define("unit/paid-lost-last", func(ctx *Context, _ none) (string, error) {
		a, err := ctx.Agent("summarize", activities.Agent{Prompt: "p", Model: "m", MaxBudgetUSD: dec("0.15")},
			Retry(temporal.RetryPolicy{MaximumAttempts: 1}))
		return a.Text, err
	}, MaxCostUSD(dec("1")))
	env := newUnitEnv(t, runConfig{}, f)
	mockAgent(env, func(activities.Agent) (activities.AgentResult, error) {
		return activities.AgentResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil)
	})
	env.ExecuteWorkflow(f.Name(), none{})
	require.Error(t, env.GetWorkflowError())
	st := queryState(t, env)
	s := stepByName(t, st, "summarize")
	assert.Equal(t, runs.StepTimedOut, s.Status)
	require.Len(t, s.Attempts, 1)
	assert.True(t, s.Attempts[0].Unconfirmed)
	assert.Equal(t, "0.15", s.CostUSD.String())
	assert.Equal(t, "0.15", s.UnconfirmedUSD.String())
	assert.Equal(t, "0.15", st.Budget.Spent.String())
}
