package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/protocol"
)

// quotaWorker starts a worker of the test flows on its own task queue with opts (the
// queue, providers and directory filled in) and returns a client of that queue.
func quotaWorker(t *testing.T, queue string, opts flow.WorkerOptions) *flowclient.Client {
	t.Helper()
	opts.TaskQueue, opts.Directory, opts.Providers = queue, approval.StaticDirectory{}, shared.llm.providers()
	w := flow.NewWorker(shared.tc, opts, testflows.All()...)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
}

// ledgerState reads a monthly ledger's exact state (spend, charge keys, reservations) with
// its Query; an empty quota when the ledger does not exist yet.
func ledgerState(t *testing.T, queue string, scope budget.Scope, month string) budget.Quota {
	t.Helper()
	v, err := shared.tc.QueryWorkflow(ctxT(t, 30*time.Second), protocol.LedgerID(queue, scope, month), "", protocol.LedgerQuery)
	if protocol.IsNotFound(err) {
		return *budget.NewQuota(scope, month)
	}
	require.NoError(t, err)
	var q budget.Quota
	require.NoError(t, v.Get(&q))
	return q
}

// Two starts at once against a quota with room for one run's cap: one is admitted, the
// other refused with both figures, and the month never goes over the quota. The run's
// unspent reservation comes back when it ends, so a start that did not fit before fits.
func TestQuotaConcurrentStartsAdmitOneAndReleaseTheRest(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	queue := "quota-concurrent"
	quota := decimal.RequireFromString("0.50")
	c := quotaWorker(t, queue, flow.WorkerOptions{Quotas: budget.Quotas{PerWorkflow: map[string]decimal.Decimal{"test.spend": quota}}})
	month := budget.MonthOf(time.Now())
	scope := budget.WorkflowScope("test.spend")
	// Each run spends $0.25 under a $0.30 cap: two caps ($0.60) do not fit the $0.50 quota.
	in := testflows.SpendInput{Steps: []testflows.SpendStep{{Name: "only", Prompt: "cost-25c", LimitUSD: "0.25"}}}
	capUSD := usd("0.30")

	var (
		wg    sync.WaitGroup
		found [2]*core.Run
		errs  [2]error
	)
	for i := range found {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[i], errs[i] = c.Start(ctx, "test.spend", in, core.StartOptions{MaxCostUSD: capUSD})
		}()
	}
	wg.Wait()
	admitted, refused := -1, -1
	for i, err := range errs {
		if err == nil {
			admitted = i
		} else {
			refused = i
		}
	}
	require.True(t, admitted >= 0 && refused >= 0, "exactly one admitted and one refused: %v", errs)
	var qe *budget.QuotaError
	require.True(t, errors.As(errs[refused], &qe), "%v", errs[refused])
	assert.Equal(t, scope, qe.Scope)
	// The refused start saw the admitted run's cap (its spend and what is left of it) while
	// that run was in flight, or only its final spend ($0.25) when it had already ended and
	// given the rest back: the two starts race, and the run takes a fraction of a second.
	held := qe.Spent.Add(qe.Reserved)
	assert.True(t, held.Equal(*usd("0.30")) || (held.Equal(*usd("0.25")) && qe.Reserved.IsZero()),
		"the admitted run's cap, or its final spend: %s spent + %s reserved", qe.Spent, qe.Reserved)
	assertUSDEqual(t, "0.30", qe.Requested)
	assert.Regexp(t, regexp.MustCompile(`^monthly quota of workflow test\.spend: \$0\.\d\d spent \+ \$0\.\d\d reserved \+ \$0\.30 for this run > \$0\.50 in `+month+`$`), errs[refused].Error())

	d, err := c.Wait(ctx, found[admitted].ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, "0.25", d.State.CostUSD.String())
	// The run released the $0.05 it did not spend.
	require.Eventually(t, func() bool {
		q := ledgerState(t, queue, scope, month)
		return q.Spent.Equal(decimal.RequireFromString("0.25")) && q.Reserved.IsZero() && len(q.Reservations) == 0
	}, 20*time.Second, 100*time.Millisecond, "the ledger holds the $0.25 spent and no reservation")

	// $0.25 spent + a $0.25 cap fits exactly; it would not have with the $0.05 still held.
	next, err := c.Start(ctx, "test.spend", in, core.StartOptions{MaxCostUSD: usd("0.25")})
	require.NoError(t, err)
	d, err = c.Wait(ctx, next.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	require.Eventually(t, func() bool {
		q := ledgerState(t, queue, scope, month)
		return q.Spent.Equal(quota) && q.Reserved.IsZero()
	}, 20*time.Second, 100*time.Millisecond)
	_, err = c.Start(ctx, "test.spend", in, core.StartOptions{MaxCostUSD: usd("0.01")})
	assert.EqualError(t, err, "monthly quota of workflow test.spend: $0.50 spent + $0.00 reserved + $0.01 for this run > $0.50 in "+month)

	q := ledgerState(t, queue, scope, month)
	assert.True(t, q.Spent.LessThanOrEqual(quota), "the month never went over its quota: spent %s", q.Spent)
	assert.Len(t, q.Charges, 2, "two runs ran, one step each")
	overall := ledgerState(t, queue, budget.AllScope, month)
	assert.Equal(t, "0.5", overall.Spent.String(), "the overall ledger is charged too")
}

// A run started without a Client (as a schedule or another tool would) reserves its cap
// itself before any step, and releases what is left when it ends.
func TestQuotaRunNotStartedByAClientReserves(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	queue := "quota-direct"
	c := quotaWorker(t, queue, flow.WorkerOptions{MaxCostUSD: usd("0.40"),
		Quotas: budget.Quotas{PerWorkflow: map[string]decimal.Decimal{"test.spend.wait": decimal.RequireFromString("0.60")}}})
	month := budget.MonthOf(time.Now())
	scope := budget.WorkflowScope("test.spend.wait")

	tr, err := shared.tc.ExecuteWorkflow(ctx, clientStart(queue), "test.spend.wait", nil)
	require.NoError(t, err)
	eventually(t, c, tr.GetID(), "spent and waiting", waitingFor("approval:go"))
	key := tr.GetID() + "#" + tr.GetRunID()
	var q budget.Quota
	require.Eventually(t, func() bool {
		q = ledgerState(t, queue, scope, month)
		return q.Spent.Equal(decimal.RequireFromString("0.25"))
	}, 20*time.Second, 100*time.Millisecond)
	assert.Equal(t, []string{key}, q.ReservationKeys(), "the run reserved the worker's $0.40 cap, keyed by the run")
	assertUSDEqual(t, "0.15", q.Reserved, "$0.40 less the $0.25 spent")

	// $0.25 spent + $0.15 reserved + a $0.40 cap is over $0.60: a Client start is refused.
	_, err = c.Start(ctx, "test.spend.wait", nil, core.StartOptions{})
	assert.EqualError(t, err, "monthly quota of workflow test.spend.wait: $0.25 spent + $0.15 reserved + $0.40 for this run > $0.60 in "+month)

	_, err = c.Vote(ctx, tr.GetID(), approval.Vote{Gate: "go", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	d, err := c.Wait(ctx, tr.GetID())
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	require.Eventually(t, func() bool {
		q = ledgerState(t, queue, scope, month)
		return len(q.Reservations) == 0 && q.Reserved.IsZero()
	}, 20*time.Second, 100*time.Millisecond, "released at the end")
}

// Without any quota every run's cost still reaches the month's ledgers, and flowctl
// budget (the built binary) shows it per workflow and overall, with "no quota".
func TestBudgetFlowctlShowsTheMonthsSpendWithoutQuota(t *testing.T) {
	ctx := ctxT(t, 3*time.Minute)
	queue := "budget-noquota"
	c := quotaWorker(t, queue, flow.WorkerOptions{})
	month := budget.MonthOf(time.Now())
	in := testflows.SpendInput{Steps: []testflows.SpendStep{
		{Name: "a", Prompt: "cost-25c", LimitUSD: "0.25"},
		{Name: "b", Prompt: "cost-13c", LimitUSD: "0.13"},
	}}
	run, err := c.Start(ctx, "test.spend", in, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	require.Eventually(t, func() bool {
		return ledgerState(t, queue, budget.WorkflowScope("test.spend"), month).Spent.Equal(decimal.RequireFromString("0.38"))
	}, 20*time.Second, 100*time.Millisecond, "the run's cost reached the month's ledger without a quota")

	_, ctlBin := binaries(t)
	ctl := func(args ...string) string {
		cmd := exec.Command(ctlBin, append([]string{"--address", shared.srv.FrontendAddress(), "--task-queue", queue}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		require.NoError(t, cmd.Run(), e.String())
		return o.String()
	}
	out := ctl("budget")
	t.Log(out)
	assert.Regexp(t, `(?m)^SCOPE\s+MONTH\s+SPENT\s+RESERVED\s+QUOTA\s+LEFT\s+NEW RUNS$`, out)
	assert.Regexp(t, `(?m)^all workflows\s+`+month+`\s+\$0\.38\s+\$0\.00\s+no quota\s+-\s+allowed$`, out)
	assert.Regexp(t, `(?m)^workflow test\.spend\s+`+month+`\s+\$0\.38\s+\$0\.00\s+no quota\s+-\s+allowed$`, out)
	assert.Regexp(t, `(?m)^workflow test\.spend\.wait\s+`+month+`\s+\$0\.00\s+\$0\.00\s+no quota\s+-\s+allowed$`, out)

	var lines []runs.SpendLine
	require.NoError(t, json.Unmarshal([]byte(ctl("budget", "-o", "json")), &lines))
	require.NotEmpty(t, lines)
	assert.Equal(t, budget.AllScope, lines[0].Scope)
	assert.Equal(t, "0.38", lines[0].SpentUSD.String())
	assert.Nil(t, lines[0].QuotaUSD)
	assert.False(t, lines[0].Exhausted)
}

// assertUSDEqual compares amounts as numbers ("0.3" equals "0.30").
func assertUSDEqual(t *testing.T, want string, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	assert.True(t, decimal.RequireFromString(want).Equal(got), "want %s, got %s %v", want, got, msgAndArgs)
}
