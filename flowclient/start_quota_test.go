package flowclient

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

// quotaServer fakes what Client.Start talks to under monthly quotas: the catalog, the
// monthly ledgers (their reservation Update and release signal, answered by budget.Quota as
// the ledger workflow does) and run starts.
type quotaServer struct {
	client.Client
	cat core.Catalog

	mu         sync.Mutex
	ledgers    map[string]*budget.Quota
	updates    int
	started    []client.StartWorkflowOptions
	executeErr error
}

func newQuotaServer(cat core.Catalog) *quotaServer {
	return &quotaServer{cat: cat, ledgers: map[string]*budget.Quota{}}
}

func (s *quotaServer) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if id != protocol.CatalogID(s.cat.TaskQueue) {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(s.cat)
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{protocol.MemoCatalog: p}},
	}}, nil
}

type fakeWithStart struct {
	client.WithStartWorkflowOperation
	args []any
}

func (s *quotaServer) NewWithStartWorkflowOperation(_ client.StartWorkflowOptions, _ any, args ...any) client.WithStartWorkflowOperation {
	return fakeWithStart{args: args}
}

type fakeUpdate struct {
	client.WorkflowUpdateHandle
	err error
}

func (u fakeUpdate) Get(context.Context, any) error { return u.err }

func (s *quotaServer) UpdateWithStartWorkflow(_ context.Context, o client.UpdateWithStartWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates++
	id := o.UpdateOptions.WorkflowID
	r := o.UpdateOptions.Args[0].(protocol.QuotaReserve)
	q, ok := s.ledgers[id]
	if !ok {
		scope, _, err := budget.ParseLedgerID(id[:len(id)-len("@"+s.cat.TaskQueue)])
		if err != nil {
			return nil, err
		}
		q = budget.NewQuota(scope, r.Month)
		s.ledgers[id] = q
	}
	err := q.Reserve(r.Key, r.Amount, r.Limit, time.Now().Add(r.TTL))
	var qe *budget.QuotaError
	if errors.As(err, &qe) {
		// As it crosses Temporal: an application error carrying the refusal.
		err = temporal.NewApplicationErrorWithOptions(qe.Error(), protocol.ErrorQuotaExhausted,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{*qe}})
	}
	return fakeUpdate{err: err}, nil
}

func (s *quotaServer) SignalWorkflow(_ context.Context, id, _, name string, arg any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.ledgers[id]; ok && name == protocol.LedgerRelease {
		q.Release(arg.(protocol.QuotaRelease).Key)
		return nil
	}
	return serviceerror.NewNotFound("workflow not found")
}

type fakeRun struct {
	client.WorkflowRun
	id string
}

func (r fakeRun) GetID() string    { return r.id }
func (r fakeRun) GetRunID() string { return "run-of-" + r.id }

func (s *quotaServer) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.executeErr != nil {
		return nil, s.executeErr
	}
	s.started = append(s.started, o)
	return fakeRun{id: o.ID}, nil
}

// ledger is the fake ledger of scope this month.
func (s *quotaServer) ledger(scope budget.Scope) *budget.Quota {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ledgers[protocol.LedgerID(s.cat.TaskQueue, scope, budget.MonthOf(time.Now()))]
}

func quotaCatalog() core.Catalog {
	return core.Catalog{TaskQueue: "q", MonthlyQuotaUSD: "10", Workflows: []core.WorkflowInfo{
		{Name: "paid", MaxCostUSD: "0.50", MonthlyQuotaUSD: "1.00", OverallQuotaUSD: "10", QuotaReservations: true},
		{Name: "defaulted", WorkerMaxCostUSD: "0.30", OverallQuotaUSD: "10", QuotaReservations: true},
		{Name: "open", OverallQuotaUSD: "10", QuotaReservations: true},
		// old was published by a worker from before reservations.
		{Name: "old", MaxCostUSD: "0.50", MonthlyQuotaUSD: "1.00", OverallQuotaUSD: "10"},
	}}
}

func runReservation(t *testing.T, o client.StartWorkflowOptions) *protocol.RunReservation {
	t.Helper()
	ro, ok := o.Memo[protocol.MemoOptions].(protocol.RunOptions)
	require.True(t, ok)
	return ro.Reservation
}

func TestStartReservesTheRunsCapAndRefusesWhatDoesNotFit(t *testing.T) {
	ctx := context.Background()
	srv := newQuotaServer(quotaCatalog())
	c := New(srv, Options{TaskQueue: "q", Identity: "carol"})
	month := budget.MonthOf(time.Now())

	// The flow's $0.50 cap fits twice in its $1.00 quota.
	for _, id := range []string{"paid-1", "paid-2"} {
		run, err := c.Start(ctx, "paid", nil, core.StartOptions{ID: id})
		require.NoError(t, err)
		assert.Equal(t, id, run.ID)
	}
	require.Len(t, srv.started, 2)
	for i, o := range srv.started {
		r := runReservation(t, o)
		require.NotNil(t, r, "the run is told its reservation")
		assert.Regexp(t, `^`+o.ID+`#[0-9a-f]{12}$`, r.Key, "the run's ID and a request ID")
		assert.Equal(t, month, r.Month)
		assertUSD(t, "0.50", r.Amount)
		assert.Contains(t, srv.ledger(budget.WorkflowScope("paid")).ReservationKeys(), r.Key, "start %d", i)
		assert.Contains(t, srv.ledger(budget.AllScope).ReservationKeys(), r.Key, "the overall ledger too")
	}

	// A third is refused with both figures, and nothing starts.
	_, err := c.Start(ctx, "paid", nil, core.StartOptions{ID: "paid-3"})
	var qe *budget.QuotaError
	require.True(t, errors.As(err, &qe), "%v", err)
	assert.True(t, errors.Is(err, budget.ErrQuotaExhausted))
	assert.EqualError(t, err, "monthly quota of workflow paid: $0.00 spent + $1.00 reserved + $0.50 for this run > $1.00 in "+month)
	assert.Equal(t, budget.WorkflowScope("paid"), qe.Scope)
	assertUSD(t, "1.00", qe.Reserved)
	assertUSD(t, "0.50", qe.Requested)
	assert.Len(t, srv.started, 2, "a refused start starts nothing")
	assert.Len(t, srv.ledger(budget.AllScope).ReservationKeys(), 2, "the overall reservation of the refused start was released")
	assertUSD(t, "1.00", srv.ledger(budget.AllScope).Reserved)

	// A lower cap in the start options fits what is left once a run gives some back.
	srv.ledger(budget.WorkflowScope("paid")).ChargeReserved("r1/a", runReservation(t, srv.started[0]).Key, decimal.RequireFromString("0.10"))
	srv.ledger(budget.WorkflowScope("paid")).Release(runReservation(t, srv.started[0]).Key)
	_, err = c.Start(ctx, "paid", nil, core.StartOptions{ID: "paid-4", MaxCostUSD: decp("0.40")})
	require.NoError(t, err)
	assertUSD(t, "0.40", runReservation(t, srv.started[2]).Amount, "the start's cap wins over the flow's")
	_, err = c.Start(ctx, "paid", nil, core.StartOptions{ID: "paid-5", MaxCostUSD: decp("0.01")})
	assert.EqualError(t, err, "monthly quota of workflow paid: $0.10 spent + $0.90 reserved + $0.01 for this run > $1.00 in "+month)
}

func TestStartReservationOfOtherCaps(t *testing.T) {
	ctx := context.Background()
	srv := newQuotaServer(quotaCatalog())
	c := New(srv, Options{TaskQueue: "q", Identity: "carol"})

	_, err := c.Start(ctx, "defaulted", nil, core.StartOptions{ID: "d-1", Delay: time.Hour})
	require.NoError(t, err)
	r := runReservation(t, srv.started[0])
	require.NotNil(t, r)
	assertUSD(t, "0.30", r.Amount, "the worker's default cap")
	exp := srv.ledger(budget.AllScope).Reservations[r.Key].Expires
	assert.WithinDuration(t, time.Now().Add(budget.DefaultReservationTTL+time.Hour), exp, time.Minute, "the delay adds to the deadline")

	// Without a cap: admitted while the quota has room, reserving nothing.
	_, err = c.Start(ctx, "open", nil, core.StartOptions{ID: "o-1"})
	require.NoError(t, err)
	assert.Nil(t, runReservation(t, srv.started[1]))
	assert.Len(t, srv.ledger(budget.AllScope).ReservationKeys(), 1)
	srv.ledger(budget.AllScope).Charge("r/x", decimal.RequireFromString("9.70"))
	_, err = c.Start(ctx, "open", nil, core.StartOptions{ID: "o-2"})
	assert.EqualError(t, err, "monthly quota of all workflows is exhausted: $9.70 of $10.00 spent, $0.30 reserved in "+budget.MonthOf(time.Now()))
	assert.Len(t, srv.started, 2)
}

func TestStartWithoutQuotasReservesNothing(t *testing.T) {
	srv := newQuotaServer(core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "paid", MaxCostUSD: "0.50"}}})
	c := New(srv, Options{TaskQueue: "q", Identity: "carol"})
	_, err := c.Start(context.Background(), "paid", nil, core.StartOptions{ID: "p-1"})
	require.NoError(t, err)
	assert.Zero(t, srv.updates, "no ledger is asked")
	assert.Nil(t, runReservation(t, srv.started[0]))
}

func TestStartRefusedAfterItsReservationReleasesIt(t *testing.T) {
	srv := newQuotaServer(quotaCatalog())
	srv.executeErr = serviceerror.NewWorkflowExecutionAlreadyStarted("already started", "", "other-run")
	c := New(srv, Options{TaskQueue: "q", Identity: "carol"})
	_, err := c.Start(context.Background(), "paid", nil, core.StartOptions{ID: "taken"})
	var re *RunExistsError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, 2, srv.updates, "both ledgers reserved")
	assert.Empty(t, srv.ledger(budget.AllScope).ReservationKeys(), "and both released")
	assert.Empty(t, srv.ledger(budget.WorkflowScope("paid")).ReservationKeys())
}

func TestStartCap(t *testing.T) {
	p := func(start string) *startplan.Plan {
		return &startplan.Plan{RunOpts: protocol.RunOptions{MaxCostUSD: start}}
	}
	tests := []struct {
		name, start, flow, worker, want string
	}{
		{"the start's", "0.10", "0.50", "0.90", "0.1"},
		{"the flow's", "", "0.50", "0.90", "0.5"},
		{"the worker's", "", "", "0.90", "0.9"},
		{"none", "", "", "", "0"},
		{"a zero cap", "0", "0.50", "", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := startCap(core.WorkflowInfo{MaxCostUSD: tt.flow, WorkerMaxCostUSD: tt.worker}, p(tt.start))
			assert.Equal(t, tt.want, got.String())
		})
	}
}

func TestStartAgainstWorkersFromBeforeReservationsOnlyChecks(t *testing.T) {
	srv := newQuotaServer(quotaCatalog())
	c := New(srv, Options{TaskQueue: "q", Identity: "carol"})
	_, err := c.Start(context.Background(), "old", nil, core.StartOptions{ID: "old-1"})
	require.NoError(t, err)
	assert.Zero(t, srv.updates, "their ledgers know no reservation Update")
	require.Len(t, srv.started, 1)
	assert.Nil(t, runReservation(t, srv.started[0]))
}

// TestStartRefusesBadNamesIDsAndOversizedStarts: a bad flow name or a run ID the Temporal
// client cannot send are bad input (core.InputError) before anything is sent, and a start the
// server refuses as too big is bad input that says what to do, not a raw gRPC error.
func TestStartRefusesBadNamesIDsAndOversizedStarts(t *testing.T) {
	srv := newQuotaServer(core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "hello"}}})
	c := New(srv, Options{TaskQueue: "q"})
	var in *core.InputError
	_, err := c.Start(t.Context(), "bad name!", nil, core.StartOptions{})
	require.ErrorAs(t, err, &in)
	assert.Contains(t, err.Error(), `bad input for start: flow name "bad name!"`)
	for _, id := range []string{"x\x01y", "ünï", "tab\there", strings.Repeat("a", 1001), "   "} {
		_, err := c.Start(t.Context(), "hello", nil, core.StartOptions{ID: id})
		require.ErrorAs(t, err, &in, "ID %q", id)
		assert.Contains(t, err.Error(), "run ID", "ID %q", id)
	}
	assert.Empty(t, srv.started, "nothing was started")

	srv.executeErr = status.Error(codes.ResourceExhausted, "grpc: received message after decompression larger than max 4194304")
	_, err = c.Start(t.Context(), "hello", nil, core.StartOptions{})
	require.ErrorAs(t, err, &in)
	assert.Contains(t, err.Error(), "the start is too big for the Temporal server (grpc: received message after decompression larger than max 4194304): keep big inputs in the blob store")
	srv.executeErr = serviceerror.NewInvalidArgument("Blob data size exceeds limit.")
	_, err = c.Start(t.Context(), "hello", nil, core.StartOptions{})
	require.ErrorAs(t, err, &in)
	srv.executeErr = serviceerror.NewUnavailable("down")
	_, err = c.Start(t.Context(), "hello", nil, core.StartOptions{})
	assert.False(t, errors.As(err, &in), "other errors stay what they are: %v", err)
}

func decp(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }

// assertUSD compares amounts as numbers ("1.0" equals "1.00").
func assertUSD(t *testing.T, want string, got decimal.Decimal, msgAndArgs ...any) {
	t.Helper()
	assert.True(t, decimal.RequireFromString(want).Equal(got), append([]any{"want $%s, got $%s", want, got.String()}, msgAndArgs...)...)
}
