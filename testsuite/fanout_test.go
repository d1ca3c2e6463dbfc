package testsuite_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/testsuite"
)

// The fan-out primitives in virtual time through the rollout example: ForEach over the
// regions, a branch waiting for the sign-off, and an Always step, with steps mocked by name
// and the sign-off given an hour in.
func TestRolloutInVirtualTime(t *testing.T) {
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory()})
	env.MockStep("deploy", activities.ShellResult{Stdout: "deployed"}, nil)
	env.MockStep("check", activities.ShellResult{Stdout: "healthy\n"}, nil)
	env.MockStep("report", activities.ShellResult{}, nil)
	vote := env.Approve(time.Hour, "sign-off", "carol")
	out, r := testsuite.Run(env, examples.Rollout, examples.RolloutInput{Version: "9.9.9", Regions: []string{"eu", "us", "ap", "sa"}})
	require.NoError(t, r.Err)
	require.NoError(t, vote.Err)
	assert.Equal(t, []string{"healthy", "healthy", "healthy", "healthy"}, out.Regions)
	assert.Equal(t, approval.Approved, out.SignOff)
	assert.Equal(t, "1h0m0s", out.Duration, "the run waited for the sign-off, in virtual time")
	assert.Equal(t, 4, env.Calls("deploy"), "every region deployed once")
	assert.Equal(t, 1, env.Calls("report"), "the Always step ran once")
	labels := map[string]runs.StepStatus{}
	for _, s := range r.State.Nested() {
		labels[s.Label()] = s.Status
	}
	assert.Equal(t, runs.StepCompleted, labels["regions/sa/check"])
	assert.Equal(t, runs.StepCompleted, labels["sign-off/sign-off"])
}

// A failed region halts the rollout and cancels the sign-off branch; Always still runs.
func TestRolloutHaltsOnAFailedRegion(t *testing.T) {
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory()})
	env.MockStep("deploy", activities.ShellResult{}, nil)
	env.MockStep("check", activities.ShellResult{}, temporal.NewNonRetryableApplicationError("exit code 1: region unhealthy", activities.ShellExitErrorType, nil))
	env.MockStep("report", activities.ShellResult{}, nil)
	_, r := testsuite.Run(env, examples.Rollout, examples.RolloutInput{Version: "9.9.9", Regions: []string{"eu"}})
	require.Error(t, r.Err)
	assert.Equal(t, runs.StatusFailed, r.Status())
	assert.Contains(t, r.Err.Error(), "region unhealthy")
	assert.Equal(t, 1, env.Calls("report"), "Always runs on a failure too")
}

// Race, an error handler after an allowed failure, and pausing one run, in virtual time.
func TestRaceErrorHandlersAndPauseInVirtualTime(t *testing.T) {
	var failures []string
	f := flow.Define("composed", func(ctx *flow.Context, _ struct{}) (string, error) {
		ctx.OnStepError(func(c *flow.Context, sf flow.StepFailure) {
			failures = append(failures, sf.Step)
		})
		if _, err := ctx.Shell("lint", activities.Shell{Command: "lint"}, flow.AllowFailure()); err != nil {
			var af *flow.AllowedFailure
			if !errors.As(err, &af) {
				return "", err
			}
		}
		_, out, err := flow.Race(ctx, "first",
			func(c *flow.Context) (string, error) { return "timer", c.Sleep("wait", time.Hour) },
			func(c *flow.Context) (string, error) {
				r, err := c.Shell("probe", activities.Shell{Command: "probe"})
				return r.Stdout, err
			})
		if err != nil {
			return "", err
		}
		if err := ctx.Sleep("cool-down", 10*time.Minute); err != nil {
			return "", err
		}
		_, err = ctx.Shell("after", activities.Shell{Command: "after"})
		return out, err
	})
	env := testsuite.NewEnv(t)
	env.MockStep("lint", activities.ShellResult{}, temporal.NewNonRetryableApplicationError("exit code 1: style", activities.ShellExitErrorType, nil))
	env.MockStep("probe", activities.ShellResult{Stdout: "probed"}, nil)
	env.MockStep("after", activities.ShellResult{}, nil)
	pause := env.PauseRun(5*time.Minute, "alice", "freeze")
	resume := env.ResumeRun(3*time.Hour, "alice")
	out, r := testsuite.Run(env, f, struct{}{})
	require.NoError(t, r.Err)
	require.NoError(t, pause.Err)
	require.NoError(t, resume.Err)
	assert.Equal(t, "probed", out, "the probe won the race")
	assert.Equal(t, runs.StatusWarning, r.Status(), "the allowed failure leaves a warning")
	assert.Equal(t, []string{"lint"}, failures, "the error handler saw the allowed failure")
	after, ok := r.Step("after")
	require.True(t, ok)
	assert.False(t, after.StartedAt.Before(r.State.StartedAt.Add(3*time.Hour)), "nothing new started while paused")
	wait, ok := r.Step("wait")
	require.True(t, ok)
	assert.Equal(t, runs.StepCancelled, wait.Status, "the losing branch was cancelled")
}
