package integration

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
)

func usd(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// runWith starts name with opts on the shared worker and waits for the end.
func runWith(t *testing.T, name string, input any, opts core.StartOptions) *runs.Description {
	t.Helper()
	ctx := ctxT(t, 2*time.Minute)
	run, err := shared.client.Start(ctx, name, input, opts)
	require.NoError(t, err)
	d, err := shared.client.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.NotNil(t, d.State, d.StateError)
	return d
}

func TestBudgetBoundariesToTheCent(t *testing.T) {
	before := shared.llm.scripted.Calls()
	steps := []testflows.SpendStep{
		{Name: "a", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "b", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "c", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "exact", Prompt: "cost-25c", LimitUSD: "0.25"}, // spend reaches the cap exactly: runs
		{Name: "over", Prompt: "cost-1c", LimitUSD: "0.01"},   // one cent over: not dispatched
	}
	d := runWith(t, "test.spend", testflows.SpendInput{Steps: steps}, core.StartOptions{MaxCostUSD: usd("1.00")})
	assert.Equal(t, runs.StatusBudgetExceeded, d.Status)
	assert.Equal(t, 4, shared.llm.scripted.Calls()-before, "the provider was never called for the refused step")
	assert.Equal(t, "1", d.State.CostUSD.String())
	assert.Equal(t, runs.StepCompleted, stepNamed(t, d.State.Steps, "exact").Status)
	over := stepNamed(t, d.State.Steps, "over")
	assert.Equal(t, runs.StepRefused, over.Status)
	assert.Contains(t, over.Error, "budget: step over needs $0.01 but only $0.00 of the $1.00 cap is left")
	assert.Contains(t, d.Error, "budget:")
	require.NotNil(t, d.State.Budget)
	assert.True(t, d.State.Budget.Cap.Set)
	assert.Equal(t, budget.Source("start"), d.State.Budget.Cap.Source)
	require.NotEmpty(t, d.State.Budget.Warnings, "the 80% warning was recorded")
}

func TestParallelAgentStepsReserveTogether(t *testing.T) {
	before := shared.llm.scripted.Calls()
	steps := []testflows.SpendStep{
		{Name: "x", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "y", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "z", Prompt: "cost-25c", LimitUSD: "0.25"},
	}
	d := runWith(t, "test.spend.parallel", testflows.SpendInput{Steps: steps}, core.StartOptions{MaxCostUSD: usd("0.50")})
	assert.Equal(t, runs.StatusBudgetExceeded, d.Status)
	assert.Equal(t, 0, shared.llm.scripted.Calls()-before, "no step of the wave was dispatched")
	require.Len(t, d.State.Steps, 3, "each step of the wave is recorded, as refused")
	for _, s := range d.State.Steps {
		assert.Equal(t, runs.StepRefused, s.Status, s.Name)
	}
	assert.True(t, d.State.CostUSD.IsZero())
	assert.Contains(t, d.Error, "$0.75")
}

func TestChildThatWouldExceedTheParentsRemainingBudget(t *testing.T) {
	steps := []testflows.SpendStep{
		{Name: "k1", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "k2", Prompt: "cost-25c", LimitUSD: "0.25"},
	}
	d := runWith(t, "test.spend.parent", testflows.SpendInput{Steps: steps}, core.StartOptions{MaxCostUSD: usd("0.60")})
	assert.Equal(t, runs.StatusBudgetExceeded, d.Status, d.Error)
	kid := stepNamed(t, d.State.Steps, "kid")
	require.NotNil(t, kid.Child)
	assert.Equal(t, runs.StatusBudgetExceeded, kid.Child.Status)
	assert.Equal(t, "0.25", kid.Child.CostUSD.String(), "the child spent its first step and was refused the second")
	assert.Equal(t, "0.5", d.State.CostUSD.String(), "the child's spend rolled up into the parent")
	cd, err := shared.client.Describe(ctxT(t, time.Minute), kid.Child.ID)
	require.NoError(t, err)
	require.NotNil(t, cd.State.Budget)
	assert.Equal(t, "0.35", cd.State.Budget.Cap.Amount.String(), "the child's cap was the parent's remaining budget")
}

func TestProviderOvershootIsChargedAndVisible(t *testing.T) {
	steps := []testflows.SpendStep{{Name: "pricey", Prompt: "cost-13c", LimitUSD: "0.10"}}
	d := runWith(t, "test.spend", testflows.SpendInput{Steps: steps}, core.StartOptions{MaxCostUSD: usd("1.00")})
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "0.13", d.State.CostUSD.String())
	require.Len(t, d.State.Budget.Charges, 1)
	assert.Equal(t, "0.03", d.State.Budget.Charges[0].Overshoot.String())
}

func TestPausePolicyRaiseGoesOnAndDeadlineStops(t *testing.T) {
	steps := []testflows.SpendStep{
		{Name: "one", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "two", Prompt: "cost-25c", LimitUSD: "0.25"},
	}
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "test.spend", testflows.SpendInput{Steps: steps},
		core.StartOptions{MaxCostUSD: usd("0.30"), BudgetPolicy: budget.Pause, BudgetPause: time.Minute})
	require.NoError(t, err)
	eventually(t, c, run.ID, "paused", func(d *runs.Description) bool { return d.Status == runs.StatusBudgetPaused })
	_, err = c.RaiseBudget(ctx, flowclient.BudgetRequest{Run: run.ID, To: decimal.RequireFromString("0.20"), By: "alice"})
	var re *flowclient.RefusedError
	require.True(t, errors.As(err, &re), "a cap below what is spent is refused: %v", err)
	_, err = c.RaiseBudget(ctx, flowclient.BudgetRequest{Run: run.ID, To: decimal.RequireFromString("0.40"), By: "alice"})
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	d := eventually(t, c, run.ID, "still paused", func(d *runs.Description) bool { return d.Status == runs.StatusBudgetPaused })
	assert.Equal(t, "0.4", d.State.Budget.Cap.Amount.String(), "$0.40 is not enough for the $0.25 step: still paused")
	cp, err := c.RaiseBudget(ctx, flowclient.BudgetRequest{Run: run.ID, To: decimal.RequireFromString("0.60"), By: "alice"})
	require.NoError(t, err)
	assert.Equal(t, "0.6", cp.Amount.String())
	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "0.5", d.State.CostUSD.String())

	d = runWith(t, "test.spend", testflows.SpendInput{Steps: steps},
		core.StartOptions{MaxCostUSD: usd("0.30"), BudgetPolicy: budget.Pause, BudgetPause: 2 * time.Second})
	assert.Equal(t, runs.StatusBudgetExceeded, d.Status, "nobody raised the cap before the deadline")
	assert.Equal(t, "0.25", d.State.CostUSD.String())
}

func TestMonthlyQuotaRefusesNewRunsAndLetsRunningOnesFinish(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	queue := "quota"
	quota := decimal.RequireFromString("0.50")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: approval.StaticDirectory{},
		Providers: shared.llm.providers(), Quotas: budget.Quotas{PerWorkflow: map[string]decimal.Decimal{"test.spend.wait": quota}}},
		testflows.All()...)
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})

	// Two runs spend $0.25 each and wait at their gates; together they exhaust the quota.
	var found []string
	for i := 0; i < 2; i++ {
		r, err := c.Start(ctx, "test.spend.wait", nil, core.StartOptions{})
		require.NoError(t, err)
		found = append(found, r.ID)
		eventually(t, c, r.ID, "spent and waiting", waitingFor("approval:go"))
	}
	month := budget.MonthOf(time.Now())
	require.Eventually(t, func() bool {
		lines, err := c.MonthlySpend(ctx, month)
		if err != nil {
			return false
		}
		for _, l := range lines {
			if l.Scope == budget.WorkflowScope("test.spend.wait") {
				return l.SpentUSD.Equal(quota) && l.Exhausted
			}
		}
		return false
	}, 20*time.Second, 100*time.Millisecond, "the ledger has both charges")

	// A retried charge (the same run and step) counts once.
	first, err := c.Describe(ctx, found[0])
	require.NoError(t, err)
	ch := protocol.QuotaCharge{Key: budget.ChargeKey(first.RunID, "first"), Amount: decimal.RequireFromString("0.25"), Workflow: "test.spend.wait", Month: month}
	require.NoError(t, shared.tc.SignalWorkflow(ctx, protocol.LedgerID(queue, budget.WorkflowScope("test.spend.wait"), month), "", "charge", ch))
	time.Sleep(500 * time.Millisecond)
	lines, err := c.MonthlySpend(ctx, month)
	require.NoError(t, err)
	for _, l := range lines {
		if l.Scope == budget.WorkflowScope("test.spend.wait") {
			assert.Equal(t, "0.5", l.SpentUSD.String(), "the repeated charge was ignored")
		}
	}

	// A new run is refused, and nothing starts.
	_, err = c.Start(ctx, "test.spend.wait", nil, core.StartOptions{ID: "quota-refused"})
	var qe *budget.QuotaError
	require.True(t, errors.As(err, &qe), "%v", err)
	assert.Contains(t, err.Error(), "monthly quota of workflow test.spend.wait is exhausted: $0.50 of $0.50 spent in "+month)
	_, err = c.Describe(ctx, "quota-refused")
	var nf *flowclient.RunNotFoundError
	assert.True(t, errors.As(err, &nf))

	// A run started without the client's check (as a schedule would) ends before any step.
	tr, err := shared.tc.ExecuteWorkflow(ctx, clientStart(queue), "test.spend.wait", nil)
	require.NoError(t, err)
	d, err := c.Wait(ctx, tr.GetID())
	require.NoError(t, err)
	assert.Equal(t, runs.StatusBudgetExceeded, d.Status)
	assert.Contains(t, d.Error, "refused before any step")
	assert.Empty(t, d.State.Steps)

	// The runs already going are never stopped by the quota.
	for _, id := range found {
		_, err := c.Vote(ctx, id, approval.Vote{Gate: "go", Kind: approval.Approve, By: "alice"})
		require.NoError(t, err)
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	}
}

// A worker killed after a step was charged and before the run completed: the new worker
// finishes the run, and the monthly ledger holds each charge exactly once.
func TestLedgerStaysExactWhenTheWorkerIsKilledMidRun(t *testing.T) {
	queue := "ledger-crash"
	worker := startTestworker(t, queue)

	ctx := ctxT(t, 2*time.Minute)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	month := budget.MonthOf(time.Now())
	spentBefore := overallSpend(ctx, t, c, month)
	file := filepath.Join(t.TempDir(), "log")
	run, err := c.Start(ctx, "test.spend.sleep", testflows.FileSpend{File: file}, core.StartOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count(lines(t, file), "start") == 1 }, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, worker.Process.Signal(syscall.SIGKILL))
	_ = worker.Wait()

	q := decimal.RequireFromString("100")
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Quotas: budget.Quotas{MonthlyUSD: &q},
		Providers: map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(testflows.BudgetRules()...)}}, testflows.All()...)
	require.NoError(t, w.Start())
	defer w.Stop()
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "0.26", d.State.CostUSD.String())
	require.Eventually(t, func() bool {
		got := overallSpend(ctx, t, c, month).Sub(spentBefore)
		t.Logf("overall grew by %s", got)
		return got.Equal(decimal.RequireFromString("0.26"))
	}, 20*time.Second, 100*time.Millisecond, "the overall ledger grew by exactly the run's cost")
}

func overallSpend(ctx context.Context, t *testing.T, c *flowclient.Client, month string) decimal.Decimal {
	t.Helper()
	lines, err := c.MonthlySpend(ctx, month)
	require.NoError(t, err)
	for _, l := range lines {
		if l.Scope == budget.AllScope {
			return l.SpentUSD
		}
	}
	return decimal.Zero
}

func clientStart(queue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{TaskQueue: queue}
}
