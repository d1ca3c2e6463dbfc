package entity

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The helpers clients use to reach the entities, against the fake client.

func TestPublishCatalog(t *testing.T) {
	tc := &fakeClient{}
	now := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	published := raw(t, entry{Name: "zeta", OverallQuotaUSD: "50"}, entry{Name: "alpha", OverallQuotaUSD: "50"})
	require.NoError(t, PublishCatalog(context.Background(), tc, "q", published, now))

	assert.Equal(t, []string{"zeta", "alpha"}, names(t, CatalogState{Workflows: published}), "the caller's entries are left as they were")
	starts, _ := tc.calls()
	require.Len(t, starts, 1)
	s := starts[0]
	assert.Equal(t, "gateflow-catalog-q", s.ID)
	assert.Equal(t, "gateflow-catalog-q", s.Options.ID)
	assert.Equal(t, "q", s.Options.TaskQueue)
	assert.Equal(t, protocol.CatalogPublishSignal, s.Signal)
	assert.Equal(t, published, s.Arg, "the entries as published")
	assert.Equal(t, protocol.CatalogWorkflowType, s.Workflow)
	assert.Equal(t, []any{CatalogState{TaskQueue: "q"}}, s.Args, "the workflow starts empty and merges the signal")
	seed, ok := s.Options.Memo[protocol.MemoCatalog].(CatalogState)
	require.True(t, ok, "a new catalog shows the entries at once: %v", s.Options.Memo)
	assert.Equal(t, "q", seed.TaskQueue)
	assert.Equal(t, []string{"alpha", "zeta"}, names(t, seed))
	assert.Equal(t, "50", seed.MonthlyQuotaUSD)
	assert.Equal(t, now, seed.UpdatedAt)
}

func TestPublishCatalogError(t *testing.T) {
	tc := &fakeClient{startErr: errors.New("unavailable")}
	err := PublishCatalog(context.Background(), tc, "q", raw(t, entry{Name: "a"}), time.Now())
	require.EqualError(t, err, "unavailable")
}

func TestSignalControl(t *testing.T) {
	tc := &fakeClient{}
	m := protocol.ControlMessage{Workflow: "deploy", By: "alice", Reason: "freeze"}
	require.NoError(t, SignalControl(context.Background(), tc, "q", protocol.ControlPause, m))
	starts, _ := tc.calls()
	require.Len(t, starts, 1)
	assert.Equal(t, signalStart{
		ID: "gateflow-control@q", Signal: protocol.ControlPause, Arg: m,
		Options:  starts[0].Options,
		Workflow: protocol.ControlWorkflowType, Args: []any{ControlState{}},
	}, starts[0])
	assert.Equal(t, "gateflow-control@q", starts[0].Options.ID)
	assert.Equal(t, "q", starts[0].Options.TaskQueue)
}

func TestReadPaused(t *testing.T) {
	since := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	list := []protocol.PausedType{{Workflow: "build", By: "bob", Since: since}, {Workflow: "deploy", Reason: "freeze", Since: since}}
	tests := []struct {
		name     string
		describe func(string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
		want     []protocol.PausedType
		wantErr  string
	}{
		{"never started", nil, nil, ""},
		{"the memo's list", byID(map[string]*workflowservice.DescribeWorkflowExecutionResponse{
			"gateflow-control@q": described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, map[string]any{protocol.MemoPaused: list}),
		}), list, ""},
		{"no memo yet", byID(map[string]*workflowservice.DescribeWorkflowExecutionResponse{
			"gateflow-control@q": described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil),
		}), nil, ""},
		{"a bad memo", byID(map[string]*workflowservice.DescribeWorkflowExecutionResponse{
			"gateflow-control@q": described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, map[string]any{protocol.MemoPaused: "nope"}),
		}), nil, "decode memo gateflow.paused"},
		{"the server fails", func(string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
			return nil, serviceerror.NewUnavailable("down")
		}, nil, "read paused workflows: down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := &fakeClient{describe: tt.describe}
			got, err := ReadPaused(context.Background(), tc, "q")
			_, reads := tc.calls()
			assert.Equal(t, []string{"gateflow-control@q"}, reads)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReadQuota(t *testing.T) {
	scope := budget.WorkflowScope("release")
	tc := &fakeClient{describe: ledgers(t, map[budget.Scope]string{scope: "1.25", budget.AllScope: "down"})}
	spent, err := ReadQuota(context.Background(), tc, "unit", scope, "2026-11")
	require.NoError(t, err)
	assert.Equal(t, "1.25", spent.String())
	_, reads := tc.calls()
	assert.Equal(t, []string{"gateflow-ledger/workflow:release/2026-11@unit"}, reads)

	_, err = ReadQuota(context.Background(), tc, "unit", budget.AllScope, "2026-11")
	require.ErrorContains(t, err, "read the monthly ledger of all workflows: down")

	spent, err = ReadQuota(context.Background(), &fakeClient{}, "unit", scope, "2026-11")
	require.NoError(t, err)
	assert.True(t, spent.IsZero(), "nothing charged: no ledger")

	noMemo := &fakeClient{describe: func(string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
		return described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil), nil
	}}
	spent, err = ReadQuota(context.Background(), noMemo, "unit", scope, "2026-11")
	require.NoError(t, err)
	assert.True(t, spent.IsZero(), "a ledger started but not charged yet")
}

func TestCheckQuotas(t *testing.T) {
	now := time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)
	tc := &fakeClient{describe: ledgers(t, map[budget.Scope]string{budget.AllScope: "20", budget.WorkflowScope("release"): "5"})}
	require.NoError(t, CheckQuotas(context.Background(), tc, "unit", limits("50", map[string]string{"release": "5.01"}), "release", now))
	_, reads := tc.calls()
	assert.Equal(t, []string{"gateflow-ledger/all/2026-11@unit", "gateflow-ledger/workflow:release/2026-11@unit"}, reads,
		"the month of now, overall first")

	err := CheckQuotas(context.Background(), tc, "unit", limits("50", map[string]string{"release": "5"}), "release", now)
	var qe *budget.QuotaError
	require.True(t, errors.As(err, &qe), "got %v", err)
	assert.Equal(t, budget.QuotaError{Scope: budget.WorkflowScope("release"), Month: "2026-11",
		Limit: decimal.RequireFromString("5"), Spent: qe.Spent}, *qe)
	assert.Equal(t, "5", qe.Spent.String())

	err = CheckQuotas(context.Background(), tc, "unit", limits("20", nil), "release", now)
	require.True(t, errors.As(err, &qe), "got %v", err)
	assert.Equal(t, budget.AllScope, qe.Scope, "spent == limit is exhausted")

	assert.NoError(t, CheckQuotas(context.Background(), tc, "unit", nil, "release", now))
}

func TestConcurrencyHolder(t *testing.T) {
	sem := func(status enumspb.WorkflowExecutionStatus, st SemaphoreState) *workflowservice.DescribeWorkflowExecutionResponse {
		return described(t, status, map[string]any{protocol.MemoSemaphore: st})
	}
	running := described(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil)
	done := described(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil)
	id := protocol.SemaphoreID("deploys", "q")
	tests := []struct {
		name    string
		answers map[string]*workflowservice.DescribeWorkflowExecutionResponse
		want    string
	}{
		{"no semaphore", nil, ""},
		{"the semaphore ended", map[string]*workflowservice.DescribeWorkflowExecutionResponse{
			id: sem(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, SemaphoreState{Holders: []string{"h"}}), "h": running,
		}, ""},
		{"a live holder", map[string]*workflowservice.DescribeWorkflowExecutionResponse{
			id: sem(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, SemaphoreState{Holders: []string{"h"}}), "h": running,
		}, "h"},
		{"the holder closed, a waiter is live", map[string]*workflowservice.DescribeWorkflowExecutionResponse{
			id:         sem(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, SemaphoreState{Holders: []string{"a-holder"}, Waiting: []string{"w"}}),
			"a-holder": done, "w": running,
		}, "w"},
		{"nobody live", map[string]*workflowservice.DescribeWorkflowExecutionResponse{
			id:  sem(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, SemaphoreState{Holders: []string{"h"}, Waiting: []string{"gone"}}),
			"h": done,
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConcurrencyHolder(context.Background(), &fakeClient{describe: byID(tt.answers)}, "q", "deploys")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	t.Run("the server fails", func(t *testing.T) {
		_, err := ConcurrencyHolder(context.Background(), &fakeClient{describe: func(string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
			return nil, serviceerror.NewUnavailable("down")
		}}, "q", "deploys")
		require.ErrorContains(t, err, "down")
	})
}

// TestCatalogStateJSON pins the memo's field names, which clients in other languages read.
func TestCatalogStateJSON(t *testing.T) {
	c := CatalogState{TaskQueue: "q", MonthlyQuotaUSD: "50", Workflows: []json.RawMessage{json.RawMessage(`{"name":"a"}`)},
		UpdatedAt: time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)}
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.JSONEq(t, `{"task_queue":"q","monthly_quota_usd":"50","workflows":[{"name":"a"}],"updated_at":"2026-11-03T10:00:00Z"}`, string(b))
}
