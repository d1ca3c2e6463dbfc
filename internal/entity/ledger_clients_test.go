package entity

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// ledgersClient keeps one budget.Quota per ledger ID and answers the reservation Update and
// the release signal the way the ledger workflow does.
type ledgersClient struct {
	client.Client
	mu       sync.Mutex
	quotas   map[string]*budget.Quota
	updates  []string
	releases []string
	policies []enumspb.WorkflowIdConflictPolicy
	down     string // a ledger ID whose Update fails with an outage
}

type withStart struct {
	client.WithStartWorkflowOperation
	opts  client.StartWorkflowOptions
	state LedgerState
}

func (f *ledgersClient) NewWithStartWorkflowOperation(o client.StartWorkflowOptions, _ any, args ...any) client.WithStartWorkflowOperation {
	return withStart{opts: o, state: args[0].(LedgerState)}
}

type doneUpdate struct {
	client.WorkflowUpdateHandle
	err error
}

func (h doneUpdate) Get(context.Context, any) error { return h.err }

func (f *ledgersClient) UpdateWithStartWorkflow(_ context.Context, o client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := o.UpdateOptions.WorkflowID
	f.updates = append(f.updates, id)
	start := o.StartWorkflowOperation.(withStart)
	f.policies = append(f.policies, start.opts.WorkflowIDConflictPolicy)
	if id == f.down {
		return nil, errors.New("unavailable")
	}
	r := o.UpdateOptions.Args[0].(protocol.QuotaReserve)
	q, ok := f.quotas[id]
	if !ok {
		q = budget.NewQuota(start.state.Scope, start.state.Month)
		f.quotas[id] = q
	}
	return doneUpdate{err: quotaRefusal(q.Reserve(r.Key, r.Amount, r.Limit, time.Now().Add(time.Hour)))}, nil
}

func (f *ledgersClient) SignalWorkflow(_ context.Context, id, _, name string, arg any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases = append(f.releases, id)
	if q, ok := f.quotas[id]; ok && name == protocol.LedgerRelease {
		q.Release(arg.(protocol.QuotaRelease).Key)
	}
	return nil
}

func TestReserveQuotasReleasesTheFirstWhenTheSecondRefuses(t *testing.T) {
	ctx := context.Background()
	all := protocol.LedgerID("unit", budget.AllScope, "2026-11")
	wf := protocol.LedgerID("unit", budget.WorkflowScope("release"), "2026-11")
	tc := &ledgersClient{quotas: map[string]*budget.Quota{}}
	limit := limits("10", map[string]string{"release": "1.00"})
	r := protocol.QuotaReserve{Key: "run-1#a", Workflow: "release", Month: "2026-11", Amount: decimal.RequireFromString("0.60")}

	scopes, err := ReserveQuotas(ctx, tc, "unit", limit, r)
	require.NoError(t, err)
	assert.Equal(t, []budget.Scope{budget.AllScope, budget.WorkflowScope("release")}, scopes)
	assert.Equal(t, []string{all, wf}, tc.updates)
	for _, p := range tc.policies {
		assert.Equal(t, enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING, p, "a ledger is started if needed, else used")
	}

	r.Key = "run-2#b"
	_, err = ReserveQuotas(ctx, tc, "unit", limit, r)
	var qe *budget.QuotaError
	require.True(t, errors.As(err, &qe), "%v", err)
	assert.EqualError(t, err, "monthly quota of workflow release: $0.00 spent + $0.60 reserved + $0.60 for this run > $1.00 in 2026-11")
	assert.Equal(t, budget.WorkflowScope("release"), qe.Scope)
	assert.Equal(t, []string{all}, tc.releases, "the overall reservation was released")
	assert.Equal(t, []string{"run-1#a"}, tc.quotas[all].ReservationKeys())
	assert.Equal(t, "0.6", tc.quotas[all].Reserved.String())

	// No quota applies: nothing is sent.
	tc.updates = nil
	scopes, err = ReserveQuotas(ctx, tc, "unit", limits("", nil), r)
	require.NoError(t, err)
	assert.Empty(t, scopes)
	assert.Empty(t, tc.updates)
	scopes, err = ReserveQuotas(ctx, tc, "unit", nil, r)
	require.NoError(t, err)
	assert.Empty(t, scopes)

	// An outage is no refusal: it names the ledger, and the first reservation is released.
	tc.down = wf
	tc.releases = nil
	r.Key = "run-3#c"
	r.Amount = decimal.RequireFromString("0.10")
	_, err = ReserveQuotas(ctx, tc, "unit", limit, r)
	require.Error(t, err)
	assert.False(t, errors.Is(err, budget.ErrQuotaExhausted))
	assert.Contains(t, err.Error(), "reserve $0.10 in the monthly ledger of workflow release: unavailable")
	assert.Equal(t, []string{all}, tc.releases)
	assert.Equal(t, []string{"run-1#a"}, tc.quotas[all].ReservationKeys())
}

func TestAsQuotaError(t *testing.T) {
	qe := &budget.QuotaError{Scope: budget.AllScope, Month: "2026-11", Limit: decimal.RequireFromString("1"),
		Spent: decimal.RequireFromString("0.5"), Reserved: decimal.RequireFromString("0.25"), Requested: decimal.RequireFromString("0.5")}
	got, ok := AsQuotaError(quotaRefusal(qe))
	require.True(t, ok)
	assert.Equal(t, qe.Error(), got.Error())
	got, ok = AsQuotaError(qe)
	require.True(t, ok)
	assert.Same(t, qe, got)
	_, ok = AsQuotaError(errors.New("other"))
	assert.False(t, ok)
	assert.NoError(t, quotaRefusal(nil))
}
