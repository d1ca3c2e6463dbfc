package flow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
)

// shellTimeline mocks shell steps: each command "sleep N" takes N seconds of virtual
// time, "fail" fails after a second; every start and end is logged in virtual time.
type shellTimeline struct {
	mu     sync.Mutex
	env    *testsuite.TestWorkflowEnvironment
	t0     time.Time
	events []string // "+cmd@s" and "-cmd@s"
	open   int
	most   int
}

func newShellTimeline(env *testsuite.TestWorkflowEnvironment) *shellTimeline {
	tl := &shellTimeline{env: env, t0: env.Now()}
	env.OnActivity(activities.ShellActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, s activities.Shell) (activities.ShellResult, error) {
			tl.mu.Lock()
			tl.open++
			tl.most = max(tl.most, tl.open)
			tl.events = append(tl.events, fmt.Sprintf("+%s", s.Command))
			tl.mu.Unlock()
			defer func() {
				tl.mu.Lock()
				tl.open--
				tl.events = append(tl.events, fmt.Sprintf("-%s", s.Command))
				tl.mu.Unlock()
			}()
			var n int
			if _, err := fmt.Sscanf(s.Command, "sleep %d", &n); err == nil {
				select {
				case <-time.After(time.Duration(n) * 10 * time.Millisecond):
				case <-ctx.Done():
					return activities.ShellResult{}, ctx.Err()
				}
				return activities.ShellResult{Stdout: s.Command}, nil
			}
			if strings.HasPrefix(s.Command, "fail") {
				return activities.ShellResult{}, errors.New("exit code 1: " + s.Command)
			}
			return activities.ShellResult{Stdout: s.Command}, nil
		}).Maybe()
	return tl
}

type fanIn struct {
	Commands  []string       `json:"commands"`
	Max       int            `json:"max"`
	Policy    ItemFailPolicy `json:"policy"`
	Ordered   bool           `json:"ordered,omitempty"`
	DependsOn map[int][]int  `json:"depends_on,omitempty"`
}

var fanFlow = Define("unit/fan", func(ctx *Context, in fanIn) ([]string, error) {
	opts := ForEachOptions{MaxParallel: in.Max, OnItemFail: in.Policy, Ordered: in.Ordered}
	if in.DependsOn != nil {
		opts.DependsOn = func(i int) []int { return in.DependsOn[i] }
	}
	return ForEach(ctx, "items", in.Commands, func(c *Context, i int, cmd string) (string, error) {
		r, err := c.Shell("run", activities.Shell{Command: cmd}, Retry(temporal.RetryPolicy{MaximumAttempts: 1}))
		return r.Stdout, err
	}, opts)
})

func runFan(t *testing.T, in fanIn) (*testsuite.TestWorkflowEnvironment, *shellTimeline) {
	t.Helper()
	env := newUnitEnv(t, runConfig{}, fanFlow)
	tl := newShellTimeline(env)
	env.ExecuteWorkflow(fanFlow.Name(), in)
	require.True(t, env.IsWorkflowCompleted())
	return env, tl
}

func TestForEachBoundsTheItemsInFlightAndKeepsInputOrder(t *testing.T) {
	env, tl := runFan(t, fanIn{Commands: []string{"sleep 5", "sleep 1", "sleep 3", "sleep 1", "sleep 2"}, Max: 2})
	require.NoError(t, env.GetWorkflowError())
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []string{"sleep 5", "sleep 1", "sleep 3", "sleep 1", "sleep 2"}, out, "results in input order")
	assert.Equal(t, 2, tl.most, "never more than MaxParallel in flight")
	st := queryState(t, env)
	var labels []string
	for _, s := range st.Steps {
		labels = append(labels, s.Label())
	}
	assert.Contains(t, labels, "items/1/run")
	assert.Contains(t, labels, "items/5/run")
	assert.Contains(t, labels, "items/3", "each item is a branch step")
	assert.Equal(t, "items/3/run", stepActivityID(st, "items/3/run"))
}

func stepActivityID(st runs.State, label string) string {
	for _, s := range st.Steps {
		if s.Label() == label {
			return s.ActivityID
		}
	}
	return ""
}

func TestForEachHaltCancelsTheItemsInFlight(t *testing.T) {
	env, tl := runFan(t, fanIn{Commands: []string{"sleep 50", "fail", "sleep 1", "sleep 1"}, Max: 2, Policy: Halt})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "foreach items: step 2: exit code 1: fail")
	assert.Contains(t, err.Error(), "(cancelled: 1, 3, 4)")
	assert.NotContains(t, tl.events, "+sleep 1", "nothing starts after the failure")
	st := queryState(t, env)
	for _, s := range st.Steps {
		if s.Label() == "items/1/run" {
			assert.Equal(t, runs.StepCancelled, s.Status, "the item in flight was cancelled")
		}
	}
}

func TestForEachContinueRunsEveryItemAndReportsEachFailure(t *testing.T) {
	env, tl := runFan(t, fanIn{Commands: []string{"fail a", "sleep 1", "fail b", "sleep 1"}, Max: 1, Policy: Continue})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(also failed: 3)")
	assert.Equal(t, 2, strings.Count(strings.Join(tl.events, " "), "+sleep 1"), "the others ran")
}

func TestForEachSkipDependentsSkipsExactlyTheDependents(t *testing.T) {
	// 2 depends on 1 (fails), 3 on 2, 4 on nothing.
	env, tl := runFan(t, fanIn{Commands: []string{"fail one", "sleep 1", "sleep 2", "sleep 3"}, Policy: SkipDependents,
		DependsOn: map[int][]int{1: {0}, 2: {1}}})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(skipped: 2, 3)")
	events := strings.Join(tl.events, " ")
	assert.Contains(t, events, "+sleep 3", "the independent item ran")
	assert.NotContains(t, events, "+sleep 1")
	assert.NotContains(t, events, "+sleep 2")
	st := queryState(t, env)
	assert.Equal(t, runs.StepSkipped, stepByLabel(t, st, "items/2").Status)
	assert.Equal(t, runs.StepSkipped, stepByLabel(t, st, "items/3").Status)
}

func TestForEachOrderedStartsAnItemAfterItsDependencies(t *testing.T) {
	// 1 depends on 3: with one slot the order is 2, 3, 1.
	env, tl := runFan(t, fanIn{Commands: []string{"sleep 3", "sleep 1", "sleep 2"}, Max: 1, Ordered: true,
		DependsOn: map[int][]int{0: {2}}})
	require.NoError(t, env.GetWorkflowError())
	var starts []string
	for _, e := range tl.events {
		if strings.HasPrefix(e, "+") {
			starts = append(starts, e)
		}
	}
	assert.Equal(t, []string{"+sleep 1", "+sleep 2", "+sleep 3"}, starts)
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []string{"sleep 3", "sleep 1", "sleep 2"}, out, "results stay in input order")
}

func TestForEachOrderedRefusesADependencyCycle(t *testing.T) {
	env, tl := runFan(t, fanIn{Commands: []string{"sleep 1", "sleep 2", "sleep 3"}, Ordered: true,
		DependsOn: map[int][]int{0: {1}, 1: {2}, 2: {1}}})
	err := env.GetWorkflowError()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "items depend on each other in a cycle: 2 -> 3 -> 2")
	assert.Empty(t, tl.events, "no item started")
}

func stepByLabel(t *testing.T, st runs.State, label string) runs.Step {
	t.Helper()
	for _, s := range st.Steps {
		if s.Label() == label {
			return s
		}
	}
	t.Fatalf("no step %s", label)
	return runs.Step{}
}

// A branch waits for an approval while the handler runs steps; both finish.
var branchFlow = Define("unit/branch", func(ctx *Context, _ none) (string, error) {
	gate := Async(ctx, "review", func(c *Context) (approval.Outcome, error) {
		d, err := c.Approval("ship", approval.Request{Message: "Ship?", Approvers: []string{"alice"}, Required: 1})
		return d.Outcome, err
	})
	if _, err := ctx.Shell("build", activities.Shell{Command: "sleep 2"}); err != nil {
		return "", err
	}
	outcome, err := gate.Get(ctx)
	return string(outcome), err
})

func TestBranchWaitsForAnApprovalWhileTheHandlerRunsSteps(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, branchFlow)
	newShellTimeline(env)
	waiting := stateAt(t, env, 30*time.Second)
	vote := voteAt(env, time.Minute, approve("alice"))
	env.ExecuteWorkflow(branchFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, "approved", out)
	assert.Equal(t, approval.VoteStatus("approved"), vote.vote(t).Status)
	assert.Equal(t, runs.StatusAwaitingApproval, waiting.Status)
	assert.Equal(t, runs.StepCompleted, stepByLabel(t, *waiting, "build").Status, "the step ran while the branch waited")
	st := queryState(t, env)
	assert.Equal(t, runs.StepCompleted, stepByLabel(t, st, "review/ship").Status)
	assert.Equal(t, runs.KindBranch, stepByLabel(t, st, "review").Kind)
}

var raceFlow = Define("unit/race", func(ctx *Context, _ none) (string, error) {
	i, out, err := Race(ctx, "first",
		func(c *Context) (string, error) {
			r, err := c.Shell("slow", activities.Shell{Command: "sleep 100"})
			return r.Stdout, err
		},
		func(c *Context) (string, error) {
			r, err := c.Shell("fast", activities.Shell{Command: "sleep 1"})
			return r.Stdout, err
		})
	return fmt.Sprintf("%d %s", i, out), err
})

func TestRaceReturnsTheFirstAndCancelsTheLoser(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, raceFlow)
	newShellTimeline(env)
	env.ExecuteWorkflow(raceFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, "1 sleep 1", out)
	st := queryState(t, env)
	assert.Equal(t, runs.StepCancelled, stepByLabel(t, st, "first/1/slow").Status, "the loser was cancelled")
	assert.Equal(t, runs.StepCancelled, stepByLabel(t, st, "first/1").Status)
	assert.Equal(t, runs.StepCompleted, stepByLabel(t, st, "first/2").Status)
}

var parallelBranchFlow = Define("unit/parallel-branch", func(ctx *Context, _ none) (int, error) {
	res, err := ctx.Parallel("mixed", WaitAll,
		ShellStep("lint", activities.Shell{Command: "sleep 1"}),
		BranchStep("two", func(c *Context) error {
			if _, err := c.Shell("a", activities.Shell{Command: "sleep 1"}); err != nil {
				return err
			}
			_, err := c.Shell("b", activities.Shell{Command: "sleep 1"})
			return err
		}),
		ChildStep("kid", countFlow, 3))
	if err != nil {
		return 0, err
	}
	return ResultAs[int](res[2])
})

var countFlow = Define("unit/count", func(ctx *Context, n int) (int, error) { return n * 2, nil })

func TestParallelRunsBranchesAndChildrenWithSteps(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, parallelBranchFlow, countFlow)
	newShellTimeline(env)
	env.ExecuteWorkflow(parallelBranchFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out int
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, 6, out, "the child's output through ResultAs")
	st := queryState(t, env)
	assert.Equal(t, runs.StepCompleted, stepByLabel(t, st, "mixed/two/b").Status)
	assert.Equal(t, runs.StepCompleted, stepByLabel(t, st, "mixed/kid/kid").Status)
	assert.Equal(t, runs.StepCompleted, stepByLabel(t, st, "mixed/lint").Status)
}

var fanChildFlow = Define("unit/fan-child", func(ctx *Context, in []int) ([]int, error) {
	return ForEachChild(ctx, "double", countFlow, in, ForEachOptions{MaxParallel: 2,
		ItemName: func(i int) string { return fmt.Sprintf("n%d", in[i]) }})
})

func TestForEachChildRunsOneChildPerItemWithItsID(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, fanChildFlow, countFlow)
	env.ExecuteWorkflow(fanChildFlow.Name(), []int{1, 2, 3})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out []int
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []int{2, 4, 6}, out)
	st := queryState(t, env)
	kid := stepByLabel(t, st, "double/n2")
	assert.Equal(t, runs.KindChild, kid.Kind)
	require.NotNil(t, kid.Child)
	assert.Equal(t, "default-test-workflow-id/double/n2", kid.Child.ID)
}

func TestForEachRefusesMoreItemsThanTheFanOutGuard(t *testing.T) {
	env := newUnitEnv(t, runConfig{guards: Guards{MaxFanOut: 2}}, fanFlow)
	tl := newShellTimeline(env)
	env.ExecuteWorkflow(fanFlow.Name(), fanIn{Commands: []string{"a", "b", "c"}})
	require.True(t, env.IsWorkflowCompleted())
	assert.ErrorContains(t, env.GetWorkflowError(), "guard: fan-out")
	assert.Empty(t, tl.events, "no item started")
}

func TestNestedListsABranchsStepsAfterIt(t *testing.T) {
	st := runs.State{Steps: []runs.Step{
		{Name: "sign-off", Kind: runs.KindBranch, ActivityID: "sign-off"},
		{Name: "eu", Kind: runs.KindBranch, Branch: "regions", ActivityID: "regions/eu"},
		{Name: "approve", Kind: runs.KindApproval, Branch: "sign-off", ActivityID: "sign-off/approve"},
		{Name: "deploy", Kind: runs.KindShell, Branch: "regions/eu", ActivityID: "regions/eu/deploy"},
		{Name: "build", Kind: runs.KindShell, ActivityID: "build"},
	}}
	var labels []string
	for _, s := range st.Nested() {
		labels = append(labels, s.Label())
	}
	assert.Equal(t, []string{"sign-off", "sign-off/approve", "regions/eu", "regions/eu/deploy", "build"}, labels,
		"a branch's steps follow it, the rest in the order they started")
}
