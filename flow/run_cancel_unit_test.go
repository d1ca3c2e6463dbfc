package flow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/runs"
)

// cancelUpdateFlow waits an hour, with a cleanup step for failures and a report that always runs.
var cancelUpdateFlow = Define("unit/cancel", func(ctx *Context, _ none) (none, error) {
	ctx.OnError("cleanup", activities.Shell{Command: "cleanup"})
	ctx.Always("report", activities.Shell{Command: "report"})
	return none{}, ctx.Sleep("wait", time.Hour)
})

// TestCancelUpdateEndsTheRunCancelled: the Update gateflow.cancel ends a waiting run
// cancelled, as Temporal's request does (OnError and Always steps run), with who and why
// in its message; what would change nothing is refused by the Validator.
func TestCancelUpdateEndsTheRunCancelled(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, cancelUpdateFlow)
	var ran []string
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, sh activities.Shell) (activities.ShellResult, error) {
			ran = append(ran, sh.Command)
			return activities.ShellResult{}, nil
		})
	long := updateAt(env, time.Minute, protocol.UpdateCancel, protocol.RunCancel{By: "alice", Reason: strings.Repeat("x", maxCancelReason+1)})
	cancel := updateAt(env, 2*time.Minute, protocol.UpdateCancel, protocol.RunCancel{By: "alice", Reason: "wrong branch"})
	env.ExecuteWorkflow(cancelUpdateFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	var ce *temporal.CanceledError
	require.ErrorAs(t, env.GetWorkflowError(), &ce, "the run ends cancelled in Temporal too")

	assert.ErrorContains(t, long.refusal(t), "cancel: the reason is longer than 500 characters")
	assert.Equal(t, runs.StatusSleeping, cancel.value(t), "the Update answers the status it found")
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCancelled, st.Status)
	assert.Equal(t, "cancelled by alice: wrong branch", st.Error)
	assert.Equal(t, []string{"cleanup", "report"}, ran, "cleanup and report ran after the cancellation")
	assert.Equal(t, 2*time.Minute, st.EndedAt.Sub(st.StartedAt).Truncate(time.Second), "cancelled when asked, not after the sleep")
}

// TestCancelUpdateIsVerifiedAndAuthorised: with a pinned policy the cancellation needs a
// proof, and the policy's rule for cancel says who may (here the run's creator).
func TestCancelUpdateIsVerifiedAndAuthorised(t *testing.T) {
	k := newAuthKeys(t, true)
	k.policy.Rules = map[auth.Kind][]string{auth.KindCancel: {"creator"}}
	env := newUnitEnv(t, runConfig{auth: k.policy}, sleepyFlow)
	env.SetStartTime(authT0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testRun})
	require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(searchattr.CreatedByKey.ValueSet("alice"))))
	signed := func(key auth.Key, by string, m int) protocol.RunCancel {
		r := protocol.RunCancel{By: by, Reason: "stop"}
		d, err := decisions.Cancel(testNamespace, testRun, r)
		require.NoError(t, err)
		d.FirstRunID = testFirstRun
		r.Proof, err = auth.Sign(key, d, auth.SignOptions{Now: authT0.Add(time.Duration(m) * time.Minute)})
		require.NoError(t, err)
		return r
	}
	unsigned := updateAt(env, time.Minute, protocol.UpdateCancel, protocol.RunCancel{By: "alice"})
	bobAsAlice := updateAt(env, 2*time.Minute, protocol.UpdateCancel, func() protocol.RunCancel {
		r := signed(k.bob, "bob", 2)
		r.By = "alice"
		return r
	}())
	bob := updateAt(env, 3*time.Minute, protocol.UpdateCancel, signed(k.bob, "bob", 3))
	alice := updateAt(env, 4*time.Minute, protocol.UpdateCancel, signed(k.alice, "alice", 4))
	env.ExecuteWorkflow(sleepyFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.Error(t, env.GetWorkflowError())

	assert.ErrorContains(t, unsigned.refusal(t), "cancel by alice: no proof: this run accepts signed decisions only")
	assert.ErrorContains(t, bobAsAlice.refusal(t), "cancel by alice: decision refused")
	assert.ErrorContains(t, bob.refusal(t), "cancel decisions are for creator; bob is not among them")
	alice.value(t)
	st := queryState(t, env)
	assert.Equal(t, runs.StatusCancelled, st.Status)
	assert.Equal(t, "cancelled by alice: stop", st.Error)
}
