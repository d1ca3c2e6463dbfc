package entity

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The activities runs use to reach the entities, against a fake Temporal client that
// activity.GetClient returns (through a worker interceptor).

// signalStart is one SignalWithStartWorkflow call.
type signalStart struct {
	ID       string
	Signal   string
	Arg      any
	Options  client.StartWorkflowOptions
	Workflow any
	Args     []any
}

// fakeClient records SignalWithStartWorkflow and answers DescribeWorkflowExecution with
// describe (NotFound when nil). Any other call panics (the embedded client is nil).
type fakeClient struct {
	client.Client
	startErr error
	describe func(id string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
	// catalogs are the task queues ListWorkflow lists running catalogs of.
	catalogs []string

	mu        sync.Mutex
	starts    []signalStart
	described []string
}

func (f *fakeClient) SignalWithStartWorkflow(_ context.Context, workflowID, signalName string, signalArg any,
	options client.StartWorkflowOptions, wf any, workflowArgs ...any) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts = append(f.starts, signalStart{ID: workflowID, Signal: signalName, Arg: signalArg, Options: options, Workflow: wf, Args: workflowArgs})
	return nil, f.startErr
}

func (f *fakeClient) DescribeWorkflowExecution(_ context.Context, workflowID, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.mu.Lock()
	f.described = append(f.described, workflowID)
	f.mu.Unlock()
	if f.describe == nil {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	return f.describe(workflowID)
}

func (f *fakeClient) ListWorkflow(_ context.Context, _ *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	resp := &workflowservice.ListWorkflowExecutionsResponse{}
	for _, q := range f.catalogs {
		resp.Executions = append(resp.Executions, &workflowpb.WorkflowExecutionInfo{
			Execution: &commonpb.WorkflowExecution{WorkflowId: protocol.CatalogID(q)},
		})
	}
	return resp, nil
}

func (f *fakeClient) calls() ([]signalStart, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]signalStart(nil), f.starts...), append([]string(nil), f.described...)
}

// described is a DescribeWorkflowExecution answer with status and memo.
func described(t *testing.T, status enumspb.WorkflowExecutionStatus, memo map[string]any) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	fields := map[string]*commonpb.Payload{}
	for k, v := range memo {
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		require.NoError(t, err)
		fields[k] = p
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: status, Memo: &commonpb.Memo{Fields: fields},
	}}
}

// byID answers each workflow ID from a table, NotFound for the others.
func byID(answers map[string]*workflowservice.DescribeWorkflowExecutionResponse) func(string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return func(id string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
		if r, ok := answers[id]; ok {
			return r, nil
		}
		return nil, serviceerror.NewNotFound("workflow " + id + " not found")
	}
}

// clientInterceptor makes activity.GetClient return tc.
type clientInterceptor struct {
	interceptor.WorkerInterceptorBase
	tc client.Client
}

func (w *clientInterceptor) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &clientInbound{tc: w.tc}
	i.Next = next
	return i
}

type clientInbound struct {
	interceptor.ActivityInboundInterceptorBase
	tc client.Client
}

func (i *clientInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return i.Next.Init(newClientOutbound(activity.GetClient, outbound, i.tc))
}

// clientOutbound answers GetClient with tc. Its client type C is the SDK's internal one
// (activity.GetClient's result), which cannot be named here.
type clientOutbound[C any] struct {
	interceptor.ActivityOutboundInterceptorBase
	tc any
}

func newClientOutbound[C any](_ func(context.Context) C, next interceptor.ActivityOutboundInterceptor, tc any) *clientOutbound[C] {
	o := &clientOutbound[C]{tc: tc}
	o.Next = next
	return o
}

func (o *clientOutbound[C]) GetClient(context.Context) C { return o.tc.(C) }

// newActivityEnv is an activity test environment with the entity activities of queue
// "unit" registered, whose activity.GetClient is tc.
func newActivityEnv(tc client.Client, limit QuotaLimit) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestActivityEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&clientInterceptor{tc: tc}}})
	RegisterActivities(env, "unit", limit)
	return env
}

func TestQuotaActivitiesChargeBothLedgers(t *testing.T) {
	tc := &fakeClient{}
	env := newActivityEnv(tc, nil)
	ch := protocol.QuotaCharge{Key: "r1/review", Amount: decimal.RequireFromString("0.13"), Workflow: "release", Month: "2026-11"}
	_, err := env.ExecuteActivity(protocol.QuotaChargeActivity, ch)
	require.NoError(t, err)

	starts, _ := tc.calls()
	require.Len(t, starts, 2, "the overall ledger and the workflow's")
	for i, scope := range []budget.Scope{budget.AllScope, budget.WorkflowScope("release")} {
		id := protocol.LedgerID("unit", scope, "2026-11")
		s := starts[i]
		assert.Equal(t, id, s.ID)
		assert.Equal(t, id, s.Options.ID)
		assert.Equal(t, "unit", s.Options.TaskQueue, "served by the queue's own workers")
		assert.Equal(t, protocol.LedgerCharge, s.Signal)
		assert.Equal(t, protocol.LedgerWorkflowType, s.Workflow)
		assert.Equal(t, []any{LedgerState{Scope: scope, Month: "2026-11"}}, s.Args)
		got, ok := s.Arg.(protocol.QuotaCharge)
		require.True(t, ok, "the charge is the signal: %T", s.Arg)
		assert.Equal(t, "r1/review", got.Key)
		assert.Equal(t, "0.13", got.Amount.String())
	}
	assert.Equal(t, "gateflow-ledger/all/2026-11@unit", starts[0].ID)
	assert.Equal(t, "gateflow-ledger/workflow:release/2026-11@unit", starts[1].ID)
}

func TestQuotaActivitiesChargeFailure(t *testing.T) {
	tc := &fakeClient{startErr: errors.New("unavailable")}
	env := newActivityEnv(tc, nil)
	_, err := env.ExecuteActivity(protocol.QuotaChargeActivity, protocol.QuotaCharge{Key: "k", Amount: decimal.NewFromInt(1), Workflow: "release", Month: "2026-11"})
	require.ErrorContains(t, err, "charge gateflow-ledger/all/2026-11@unit: unavailable")
	starts, _ := tc.calls()
	assert.Len(t, starts, 1, "the workflow's ledger is not charged when the overall one failed")
}

// ledgers answers the ledgers of queue "unit" (any month) with the spends by scope.
func ledgers(t *testing.T, spent map[budget.Scope]string) func(string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return func(id string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
		scope, month, err := budget.ParseLedgerID(strings.TrimSuffix(id, "@unit"))
		if err != nil || !strings.HasSuffix(id, "@unit") {
			return nil, errors.New("not a ledger of unit: " + id)
		}
		s, ok := spent[scope]
		if !ok {
			return nil, serviceerror.NewNotFound("no ledger")
		}
		if s == "down" {
			return nil, serviceerror.NewUnavailable("down")
		}
		return described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, map[string]any{
			protocol.MemoQuota: QuotaSummary{Scope: scope, Month: month, Spent: decimal.RequireFromString(s), Charges: 1},
		}), nil
	}
}

func limits(all string, perWorkflow map[string]string) QuotaLimit {
	return func(s budget.Scope) (decimal.Decimal, bool) {
		if s == budget.AllScope {
			if all == "" {
				return decimal.Zero, false
			}
			return decimal.RequireFromString(all), true
		}
		name, _ := s.Workflow()
		v, ok := perWorkflow[name]
		if !ok {
			return decimal.Zero, false
		}
		return decimal.RequireFromString(v), true
	}
}

func TestQuotaActivitiesCheck(t *testing.T) {
	tests := []struct {
		name          string
		limit         QuotaLimit
		spent         map[budget.Scope]string
		wantErr       string // "" for none
		wantRetryable bool
		wantDescribed int
	}{
		{"no quotas: nothing read", nil, nil, "", false, 0},
		{"overall quota not reached", limits("50", nil), map[budget.Scope]string{budget.AllScope: "49.99"}, "", false, 1},
		{"overall quota exhausted", limits("50", nil), map[budget.Scope]string{budget.AllScope: "50"},
			"monthly quota of all workflows is exhausted: $50.00 of $50.00 spent in ", false, 1},
		{"nothing charged yet", limits("50", map[string]string{"release": "5"}), nil, "", false, 2},
		{"the workflow's quota exhausted", limits("50", map[string]string{"release": "5"}),
			map[budget.Scope]string{budget.AllScope: "10", budget.WorkflowScope("release"): "5.01"},
			"monthly quota of workflow release is exhausted: $5.01 of $5.00 spent in ", false, 2},
		{"only another workflow's quota", limits("", map[string]string{"other": "1"}),
			map[budget.Scope]string{budget.WorkflowScope("release"): "100"}, "", false, 0},
		{"a ledger that cannot be read is retried", limits("50", nil), map[budget.Scope]string{budget.AllScope: "down"},
			"read the monthly ledger of all workflows: ", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := &fakeClient{describe: ledgers(t, tt.spent)}
			env := newActivityEnv(tc, tt.limit)
			_, err := env.ExecuteActivity(protocol.QuotaCheckActivity, "release")
			_, reads := tc.calls()
			assert.Len(t, reads, tt.wantDescribed)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			var app *temporal.ApplicationError
			require.True(t, errors.As(err, &app), "got %T: %v", err, err)
			assert.Equal(t, !tt.wantRetryable, app.NonRetryable())
			if !tt.wantRetryable {
				assert.Equal(t, protocol.ErrorQuotaExhausted, app.Type(), "runs branch on the type")
			}
		})
	}
}

func TestMailboxActivitiesSignalTheMailbox(t *testing.T) {
	for _, tt := range []struct{ activity, signal string }{
		{protocol.MailboxSubscribeActivity, protocol.MailboxSubscribe},
		{protocol.MailboxUnsubscribeActivity, protocol.MailboxUnsubscribe},
	} {
		t.Run(tt.activity, func(t *testing.T) {
			tc := &fakeClient{}
			env := newActivityEnv(tc, nil)
			r := protocol.MailboxRequest{Name: "deploy-done", Key: "v1/2", WorkflowID: "run-1"}
			_, err := env.ExecuteActivity(tt.activity, r)
			require.NoError(t, err)
			starts, _ := tc.calls()
			require.Len(t, starts, 1)
			s := starts[0]
			assert.Equal(t, "gateflow-mailbox/deploy-done/v1%2F2@unit", s.ID)
			assert.Equal(t, protocol.MailboxID("unit", "deploy-done", "v1/2"), s.Options.ID)
			assert.Equal(t, "unit", s.Options.TaskQueue)
			assert.Equal(t, tt.signal, s.Signal)
			assert.Equal(t, r, s.Arg)
			assert.Equal(t, protocol.MailboxWorkflowType, s.Workflow)
			assert.Equal(t, []any{MailboxState{Name: "deploy-done", Key: "v1/2"}}, s.Args)
		})
	}
}

func TestControlActivitiesHold(t *testing.T) {
	tc := &fakeClient{}
	env := newActivityEnv(tc, nil)
	m := protocol.ControlMessage{Workflow: "deploy", RunID: "run-1"}
	_, err := env.ExecuteActivity(protocol.ControlHoldActivity, "other-queue", m)
	require.NoError(t, err)
	starts, _ := tc.calls()
	require.Len(t, starts, 1)
	s := starts[0]
	assert.Equal(t, "gateflow-control@other-queue", s.ID, "the queue the run names")
	assert.Equal(t, "other-queue", s.Options.TaskQueue)
	assert.Equal(t, protocol.ControlHold, s.Signal)
	assert.Equal(t, m, s.Arg)
	assert.Equal(t, protocol.ControlWorkflowType, s.Workflow)
	assert.Equal(t, []any{ControlState{}}, s.Args)
}

func TestSemaphoreActivitiesSignal(t *testing.T) {
	tc := &fakeClient{}
	env := newActivityEnv(tc, nil)
	m := protocol.SemaphoreMessage{Group: "deploys", Run: "run-1", Limit: 2}
	_, err := env.ExecuteActivity(protocol.SemaphoreSignalActivity, protocol.SemaphoreAcquire, m)
	require.NoError(t, err)
	starts, _ := tc.calls()
	require.Len(t, starts, 1)
	s := starts[0]
	assert.Equal(t, "gateflow-semaphore/deploys@unit", s.ID)
	assert.Equal(t, "unit", s.Options.TaskQueue)
	assert.Equal(t, protocol.SemaphoreAcquire, s.Signal)
	assert.Equal(t, m, s.Arg)
	assert.Equal(t, protocol.SemaphoreWorkflowType, s.Workflow)
	assert.Equal(t, []any{SemaphoreState{Group: "deploys", Limit: 2}}, s.Args)
}

func TestSemaphoreActivitiesCheck(t *testing.T) {
	running := described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)
	tc := &fakeClient{describe: func(id string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
		switch id {
		case "running":
			return running, nil
		case "paused":
			return described(t, enumspb.WORKFLOW_EXECUTION_STATUS_PAUSED, nil), nil
		case "completed":
			return described(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil), nil
		case "terminated":
			return described(t, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, nil), nil
		case "unreadable":
			return nil, serviceerror.NewUnavailable("down")
		}
		return nil, serviceerror.NewNotFound("not found")
	}}
	env := newActivityEnv(tc, nil)
	v, err := env.ExecuteActivity(protocol.SemaphoreCheckActivity, []string{"running", "completed", "unknown", "paused", "unreadable", "terminated"})
	require.NoError(t, err)
	var closed []string
	require.NoError(t, v.Get(&closed))
	assert.Equal(t, []string{"completed", "unknown", "terminated"}, closed, "a run that cannot be read is kept")
}

// registry records what is registered under which name.
type registry struct{ workflows, activities []string }

func (r *registry) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.workflows = append(r.workflows, o.Name)
}

func (r *registry) RegisterActivityWithOptions(_ any, o activity.RegisterOptions) {
	r.activities = append(r.activities, o.Name)
}

func TestRegister(t *testing.T) {
	var r registry
	RegisterWorkflows(&r)
	RegisterActivities(&r, "unit", nil)
	assert.ElementsMatch(t, []string{protocol.CatalogWorkflowType, protocol.MailboxWorkflowType, protocol.LedgerWorkflowType,
		protocol.ControlWorkflowType, protocol.SemaphoreWorkflowType, protocol.FanoutWorkflowType}, r.workflows)
	assert.ElementsMatch(t, []string{protocol.QuotaChargeActivity, protocol.QuotaCheckActivity, protocol.QuotaReserveActivity, protocol.QuotaReleaseActivity,
		protocol.MailboxSubscribeActivity,
		protocol.MailboxUnsubscribeActivity, protocol.MailboxPostActivity, protocol.ControlHoldActivity, protocol.SemaphoreSignalActivity, protocol.SemaphoreCheckActivity},
		r.activities)
	for _, name := range r.workflows {
		assert.True(t, Reserved(name), name)
	}
	assert.False(t, Reserved("release"))
}
