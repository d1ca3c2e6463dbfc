package startplan

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/internal/typeschema"
	"github.com/gateflow/gateflow/runs"
)

type planInput struct {
	Name string `json:"name"`
}

func planCatalog() *core.Catalog {
	return &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{
		{Name: "hello", Description: "Say hello", InputType: "planInput", InputSchema: typeschema.For(reflect.TypeFor[planInput]())},
		{Name: "paid", Category: "delivery", Version: "2", MaxCostUSD: "1.5"},
		{Name: "tagged", Priority: 2, Labels: map[string]string{"team": "ml", "tier": "batch"}, WorkerTags: []string{"gpu"}},
		// rogue was published by a worker that did not check its defaults.
		{Name: "rogue", Priority: 9},
	}}
}

// TestPlanStart is the pure part of flowclient.Client.Start: every refusal that needs no server, and
// what a start asks Temporal for.
func TestPlanStart(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	st := Starter{TaskQueue: "q", Identity: "carol"}
	cost := decimal.RequireFromString("0.75")
	tests := []struct {
		name    string
		flow    string
		input   any
		opts    core.StartOptions
		plan    bool
		wantErr string
		check   func(t *testing.T, p *Plan)
	}{
		{name: "unknown workflow", flow: "nope", wantErr: `unknown workflow "nope" on task queue q (known: hello, paid, tagged, rogue)`},
		{name: "input that does not fit", flow: "hello", input: map[string]any{"name": 3}, wantErr: "bad input for hello: payload does not match the schema: at /name"},
		{name: "input that is not JSON", flow: "hello", input: []byte(`{`), wantErr: "bad input for hello: input is not valid JSON"},
		{name: "input is checked before options", flow: "hello", input: map[string]any{"name": 3}, opts: core.StartOptions{Priority: 9}, wantErr: "at /name"},
		{name: "bad option", flow: "hello", opts: core.StartOptions{Priority: 9}, wantErr: "bad input for hello: priority 9: want 1 (highest) to 5 (lowest)"},
		{name: "bad budget policy", flow: "hello", opts: core.StartOptions{BudgetPolicy: "spend"}, wantErr: "bad input for hello:"},
		{name: "defaults", flow: "hello", input: planInput{Name: "ada"}, check: func(t *testing.T, p *Plan) {
			assert.Regexp(t, `^hello-[0-9a-f]{10}$`, p.ID)
			assert.JSONEq(t, `{"name":"ada"}`, string(p.Input))
			assert.Equal(t, runs.StatusRunning, p.Status)
			o := p.Options()
			assert.Equal(t, "q", o.TaskQueue)
			assert.Equal(t, "hello: Say hello", o.StaticSummary)
			assert.Contains(t, o.StaticDetails, "Started by **carol**")
			assert.Equal(t, core.DefaultPriority, o.Priority.PriorityKey)
			assert.Equal(t, enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL, o.WorkflowIDConflictPolicy)
			by, _ := o.TypedSearchAttributes.GetKeyword(searchattr.CreatedByKey)
			assert.Equal(t, "carol", by)
			st, _ := o.TypedSearchAttributes.GetKeyword(searchattr.StatusKey)
			assert.Equal(t, "running", st)
			assert.Equal(t, protocol.RunOptions{QuotaChecked: true}, o.Memo[protocol.MemoOptions])
		}},
		{name: "idempotency key gives a stable ID and keeps it after the run", flow: "hello", opts: core.StartOptions{IdempotencyKey: "v1"}, check: func(t *testing.T, p *Plan) {
			assert.Equal(t, idempotentRunID("hello", "v1"), p.ID)
			assert.Equal(t, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, p.Options().WorkflowIDReusePolicy)
		}},
		{name: "the flow's cap, category and version go to search attributes", flow: "paid", opts: core.StartOptions{CreatedBy: "dave", Priority: 1}, check: func(t *testing.T, p *Plan) {
			sa := p.Options().TypedSearchAttributes
			cp, _ := sa.GetFloat64(searchattr.MaxCostKey)
			assert.Equal(t, 1.5, cp)
			cat, _ := sa.GetKeyword(searchattr.CategoryKey)
			assert.Equal(t, "delivery", cat)
			v, _ := sa.GetKeyword(searchattr.VersionKey)
			assert.Equal(t, "2", v)
			by, _ := sa.GetKeyword(searchattr.CreatedByKey)
			assert.Equal(t, "dave", by)
			assert.Equal(t, 1, p.Options().Priority.PriorityKey)
		}},
		{name: "the start's cap wins", flow: "paid", opts: core.StartOptions{MaxCostUSD: &cost, BudgetPolicy: budget.Pause}, check: func(t *testing.T, p *Plan) {
			cp, _ := p.Options().TypedSearchAttributes.GetFloat64(searchattr.MaxCostKey)
			assert.Equal(t, 0.75, cp)
			assert.Equal(t, "0.75", p.RunOpts.MaxCostUSD)
			assert.Equal(t, budget.Pause, p.RunOpts.BudgetPolicy)
		}},
		{name: "a delay holds the run in pending", flow: "hello", opts: core.StartOptions{StartAt: now.Add(time.Hour)}, check: func(t *testing.T, p *Plan) {
			assert.Equal(t, runs.StatusPending, p.Status)
			assert.Equal(t, time.Hour, p.Options().StartDelay)
		}},
		{name: "concurrency key and limits", flow: "hello", opts: core.StartOptions{ConcurrencyKey: "deploy", ConcurrencyLimits: map[string]int{"builders": 2}}, check: func(t *testing.T, p *Plan) {
			assert.Equal(t, "key:deploy", p.Exclusive)
			assert.Equal(t, map[string]int{"builders": 2, "key:deploy": 1}, p.RunOpts.Concurrency)
		}},
		{name: "worker tags pick the queue", flow: "hello", opts: core.StartOptions{WorkerTags: []string{"gpu", "eu"}}, check: func(t *testing.T, p *Plan) {
			assert.Equal(t, "q@eu+gpu", p.Options().TaskQueue)
		}},
		{name: "labels", flow: "hello", opts: core.StartOptions{Labels: map[string]string{"team": "web"}}, check: func(t *testing.T, p *Plan) {
			l, _ := p.Options().TypedSearchAttributes.GetKeywordList(searchattr.LabelsKey)
			assert.Equal(t, []string{"team=web"}, l)
		}},
		{name: "the flow's defaults without start options", flow: "tagged", check: func(t *testing.T, p *Plan) {
			o := p.Options()
			assert.Equal(t, 2, o.Priority.PriorityKey)
			pr, _ := o.TypedSearchAttributes.GetInt64(searchattr.PriorityKey)
			assert.Equal(t, int64(2), pr)
			l, _ := o.TypedSearchAttributes.GetKeywordList(searchattr.LabelsKey)
			assert.Equal(t, []string{"team=ml", "tier=batch"}, l)
			assert.Equal(t, map[string]string{"team": "ml", "tier": "batch"}, p.RunOpts.Labels)
			assert.Equal(t, "q@gpu", o.TaskQueue, "the flow's worker tags pick the queue")
		}},
		{name: "start options over the flow's defaults", flow: "tagged", opts: core.StartOptions{Priority: 4,
			Labels: map[string]string{"team": "web", "env": "prod"}, WorkerTags: []string{"gpu", "eu"}}, check: func(t *testing.T, p *Plan) {
			o := p.Options()
			assert.Equal(t, 4, o.Priority.PriorityKey, "the start's priority wins")
			l, _ := o.TypedSearchAttributes.GetKeywordList(searchattr.LabelsKey)
			assert.Equal(t, []string{"env=prod", "team=web", "tier=batch"}, l, "the union, the start's value for team")
			assert.Equal(t, "q@eu+gpu", o.TaskQueue, "the union of the tags")
		}},
		{name: "a flow's priority out of range is clamped", flow: "rogue", check: func(t *testing.T, p *Plan) {
			assert.Equal(t, core.MaxPriority, p.Options().Priority.PriorityKey)
		}},
		{name: "too many tags with the flow's", flow: "tagged", opts: core.StartOptions{WorkerTags: []string{"a", "b", "c", "d"}},
			wantErr: "bad input for tagged: 5 worker tags with the flow's (a, b, c, d, gpu): a worker has at most 4"},
		{name: "too many labels with the flow's", flow: "tagged", opts: core.StartOptions{Labels: manyLabels(19)},
			wantErr: "bad input for tagged: 21 labels with the flow's defaults: at most 20"},
		{name: "the start's own options are checked before the merge", flow: "tagged", opts: core.StartOptions{WorkerTags: []string{"GPU"}},
			wantErr: `bad input for tagged: tag "GPU"`},
		{name: "a plan has no status and says so", flow: "hello", opts: core.StartOptions{ID: "plan-x"}, plan: true, check: func(t *testing.T, p *Plan) {
			o := p.Options()
			_, has := o.TypedSearchAttributes.GetKeyword(searchattr.StatusKey)
			assert.False(t, has, "lists leave plans out")
			assert.Equal(t, "plan of hello: Say hello", o.StaticSummary)
			assert.True(t, p.RunOpts.Plan)
			assert.Equal(t, "plan-x", p.ID)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(planCatalog(), st, tt.flow, tt.input, tt.opts, tt.plan, now)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Nil(t, p)
				var ie *core.InputError
				var ue *core.UnknownWorkflowError
				assert.True(t, errors.As(err, &ie) || errors.As(err, &ue), "a typed refusal: %T", err)
				return
			}
			require.NoError(t, err)
			tt.check(t, p)
		})
	}
}

func TestStartPlanHoldWhenPaused(t *testing.T) {
	p, err := New(planCatalog(), Starter{TaskQueue: "q"}, "hello", nil, core.StartOptions{}, false, time.Now())
	require.NoError(t, err)
	p.Hold()
	assert.Equal(t, runs.StatusPending, p.Status)
	assert.True(t, p.RunOpts.Paused)
	st, _ := p.Options().TypedSearchAttributes.GetKeyword(searchattr.StatusKey)
	assert.Equal(t, "pending", st)
}

func manyLabels(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = "v"
	}
	return m
}

// TestWithFlowDefaults is the merge of a flow's start defaults with a start's options.
func TestWithFlowDefaults(t *testing.T) {
	flowInfo := core.WorkflowInfo{Priority: 2, Labels: map[string]string{"team": "ml", "tier": "batch"}, WorkerTags: []string{"gpu", "eu"}}
	tests := []struct {
		name string
		info core.WorkflowInfo
		opts core.StartOptions
		want core.StartOptions
	}{
		{name: "no defaults, no options", want: core.StartOptions{Priority: core.DefaultPriority}},
		{name: "no defaults keep the start's", opts: core.StartOptions{Priority: 1, Labels: map[string]string{"a": "1"}, WorkerTags: []string{"x"}},
			want: core.StartOptions{Priority: 1, Labels: map[string]string{"a": "1"}, WorkerTags: []string{"x"}}},
		{name: "the flow's", info: flowInfo,
			want: core.StartOptions{Priority: 2, Labels: map[string]string{"team": "ml", "tier": "batch"}, WorkerTags: []string{"eu", "gpu"}}},
		{name: "the start's win", info: flowInfo, opts: core.StartOptions{Priority: 5, Labels: map[string]string{"team": "web"}, WorkerTags: []string{"gpu", "arm"}},
			want: core.StartOptions{Priority: 5, Labels: map[string]string{"team": "web", "tier": "batch"}, WorkerTags: []string{"arm", "eu", "gpu"}}},
		{name: "priority clamped", info: core.WorkflowInfo{Priority: -3}, want: core.StartOptions{Priority: core.MinPriority}},
		{name: "other options untouched", info: flowInfo, opts: core.StartOptions{ID: "r-1", MaxAttempts: 2},
			want: core.StartOptions{ID: "r-1", MaxAttempts: 2, Priority: 2, Labels: map[string]string{"team": "ml", "tier": "batch"}, WorkerTags: []string{"eu", "gpu"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			startLabels := maps.Clone(tt.opts.Labels)
			got, err := WithFlowDefaults(tt.info, tt.opts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, startLabels, tt.opts.Labels, "the caller's labels are not changed")
		})
	}
}

func TestPlanStartRefusesARemovedFlow(t *testing.T) {
	cat := &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "gone", Kind: protocol.KindYAMLFlow, Removed: "definition gone was removed (flows/gone.yaml)"}}}
	_, err := New(cat, Starter{TaskQueue: "q"}, "gone", nil, core.StartOptions{}, false, time.Now())
	var unknown *core.UnknownWorkflowError
	require.ErrorAs(t, err, &unknown)
	assert.EqualError(t, err, `workflow "gone" on task queue q is not served for new runs: definition gone was removed (flows/gone.yaml)`)
}
