package flow

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// childOptionsSpy records the options of every child workflow a run starts.
type childOptionsSpy struct {
	interceptor.WorkerInterceptorBase
	opts callLog[workflow.ChildWorkflowOptions]
}

func (s *childOptionsSpy) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	i := &spyInbound{spy: s}
	i.Next = next
	return i
}

type spyInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	spy *childOptionsSpy
}

func (i *spyInbound) Init(out interceptor.WorkflowOutboundInterceptor) error {
	o := &spyOutbound{spy: i.spy}
	o.Next = out
	return i.Next.Init(o)
}

type spyOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	spy *childOptionsSpy
}

func (o *spyOutbound) ExecuteChildWorkflow(ctx workflow.Context, childType string, args ...any) workflow.ChildWorkflowFuture {
	o.spy.opts.add(workflow.GetChildWorkflowOptions(ctx))
	return o.Next.ExecuteChildWorkflow(ctx, childType, args...)
}

func spyOnChildren(env *testsuite.TestWorkflowEnvironment) *childOptionsSpy {
	spy := &childOptionsSpy{}
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{spy}})
	return spy
}

func TestDetachedChildOutlivesItsCancelledParent(t *testing.T) {
	tests := []struct {
		name        string
		opts        []StepOption
		wantPolicy  enumspb.ParentClosePolicy
		wantDone    bool
		wantStepErr string
	}{
		{"detached", []StepOption{Detached()}, enumspb.PARENT_CLOSE_POLICY_ABANDON, true,
			"cancelled; the detached child run det-1/smoke goes on"},
		{"attached (default)", nil, enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL, false, "step wait: cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var done callLog[time.Time]
			child := Define("unit/sleepy-child", func(ctx *Context, _ none) (none, error) {
				if err := ctx.Sleep("wait", 10*time.Minute); err != nil {
					return none{}, err
				}
				done.add(ctx.Now())
				return none{}, nil
			})
			parent := Define("unit/detaching-parent", func(ctx *Context, _ none) (none, error) {
				return Child(ctx, "smoke", child, none{}, tt.opts...)
			})
			env := newUnitEnv(t, runConfig{}, parent, child)
			spy := spyOnChildren(env)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "det-1"})
			start := env.Now()
			env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
			env.ExecuteWorkflow(parent.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			require.Error(t, env.GetWorkflowError())
			assert.True(t, isCancellation(env.GetWorkflowError()), "%v", env.GetWorkflowError())

			require.Len(t, spy.opts.all(), 1)
			assert.Equal(t, tt.wantPolicy, spy.opts.all()[0].ParentClosePolicy)
			if tt.wantDone {
				require.Len(t, done.all(), 1, "the detached child completes after its parent was cancelled")
				assert.Equal(t, 10*time.Minute, done.all()[0].Sub(start).Round(time.Minute))
			} else {
				assert.Empty(t, done.all(), "cancelling the parent cancels the child")
			}
			st := queryState(t, env)
			assert.Equal(t, runs.StatusCancelled, st.Status)
			s := stepByName(t, st, "smoke")
			assert.Equal(t, runs.StepCancelled, s.Status)
			assert.Equal(t, tt.wantStepErr, s.Error)
			require.NotNil(t, s.Child)
			if tt.wantDone {
				assert.Equal(t, runs.StatusRunning, s.Child.Status, "as far as the parent knows, the child goes on")
			}
		})
	}
}

func TestDetachedChildReportsAsAnyChildWhileTheParentWaits(t *testing.T) {
	var views callLog[childView]
	child := newChildFlow(&views)
	parent := newParentFlow(child, []string{"one"}, []StepOption{Detached()})
	env := newUnitEnv(t, runConfig{}, parent, child)
	mockShell(env, deployShell)
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	var out []string
	require.NoError(t, env.GetWorkflowResult(&out))
	assert.Equal(t, []string{"child:one ok"}, out)
	s := stepByName(t, queryState(t, env), "smoke")
	assert.Equal(t, runs.StepCompleted, s.Status)
	assert.Equal(t, runs.StatusCompleted, s.Child.Status)
}

// servedMock answers the serving check with ans and counts the checks by queue.
func servedMock(env *testsuite.TestWorkflowEnvironment, ans servedAnswer) *callLog[servedQuery] {
	l := &callLog[servedQuery]{}
	env.OnActivity(checkChildServed, mock.Anything, mock.Anything).Return(func(_ context.Context, q servedQuery) (servedAnswer, error) {
		l.add(q)
		return ans, nil
	}).Maybe()
	return l
}

func TestChildOfAnUnservedFlowFailsAtOnce(t *testing.T) {
	var views callLog[childView]
	child := newChildFlow(&views)
	parent := newParentFlow(child, []string{"one"}, nil)
	env := newUnitEnv(t, runConfig{}, parent, child)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "uns-1", TaskQueue: "unit-q"})
	checks := servedMock(env, servedAnswer{Unserved: "the catalog of unit-q does not list it"})
	env.ExecuteWorkflow(parent.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	want := "step smoke: child flow unit/child: no worker on task queue unit-q serves it (the catalog of unit-q does not list it)"
	require.ErrorContains(t, env.GetWorkflowError(), want)
	assert.Empty(t, views.all(), "no child started")
	assert.Equal(t, []servedQuery{{Workflow: "unit/child", CatalogQueue: "unit-q", TaskQueue: "unit-q"}}, checks.all())
	st := queryState(t, env)
	s := stepByName(t, st, "smoke")
	assert.Equal(t, runs.StepFailed, s.Status)
	assert.Nil(t, s.Child)
	assert.Zero(t, s.DurationMS, "at once")
}

func TestChildServedIsCheckedOncePerFlowAndQueue(t *testing.T) {
	var views callLog[childView]
	child := newChildFlow(&views)
	parent := Define("unit/served-parent", func(ctx *Context, _ none) (none, error) {
		for _, o := range [][]StepOption{nil, nil, {ChildTags("gpu")}} {
			if _, err := Child(ctx, "smoke", child, "x", o...); err != nil {
				return none{}, err
			}
		}
		return none{}, nil
	})
	env := newUnitEnv(t, runConfig{}, parent, child)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "unit-q"})
	mockShell(env, deployShell)
	checks := servedMock(env, servedAnswer{})
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Len(t, views.all(), 3)
	assert.Equal(t, []servedQuery{
		{Workflow: "unit/child", CatalogQueue: "unit-q", TaskQueue: "unit-q"},
		{Workflow: "unit/child", CatalogQueue: "unit-q", TaskQueue: "unit-q@gpu", Pollers: true},
	}, checks.all())
}

func TestRunsStartedBeforeTheServedCheckSkipIt(t *testing.T) {
	var views callLog[childView]
	child := newChildFlow(&views)
	parent := newParentFlow(child, []string{"one"}, nil)
	env := newUnitEnv(t, runConfig{}, parent, child)
	mockShell(env, deployShell)
	env.OnGetVersion("gateflow.child-served", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	checks := servedMock(env, servedAnswer{Unserved: "not listed"})
	env.ExecuteWorkflow(parent.Name(), none{})
	require.NoError(t, env.GetWorkflowError())
	assert.Len(t, views.all(), 1)
	assert.Empty(t, checks.all())
}

func TestChildTagsPickTheChildsQueue(t *testing.T) {
	tests := []struct {
		name      string
		opts      []StepOption
		wantQueue string
		wantErr   string
	}{
		{"the parent's queue", nil, "unit-q@gpu", ""},
		{"own tags instead of the parent's", []StepOption{ChildTags("gpu", "eu")}, "unit-q@eu+gpu", ""},
		{"no tags: any worker", []StepOption{ChildTags()}, "unit-q", ""},
		{"a bad tag", []StepOption{ChildTags("GPU!")}, "", `step smoke: child tags: tag "GPU!"`},
		{"too many", []StepOption{ChildTags("a", "b", "c", "d", "e")}, "", "step smoke: 5 child tags: a worker has at most 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var views callLog[childView]
			child := newChildFlow(&views)
			parent := newParentFlow(child, []string{"one"}, tt.opts)
			env := newUnitEnv(t, runConfig{}, parent, child)
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: "unit-q@gpu"})
			mockShell(env, deployShell)
			var queues callLog[string]
			env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
				queues.add(info.TaskQueueName)
			})
			checks := servedMock(env, servedAnswer{})
			env.ExecuteWorkflow(parent.Name(), none{})
			require.True(t, env.IsWorkflowCompleted())
			if tt.wantErr != "" {
				require.ErrorContains(t, env.GetWorkflowError(), tt.wantErr)
				assert.Empty(t, queues.all())
				return
			}
			require.NoError(t, env.GetWorkflowError())
			assert.Equal(t, []string{tt.wantQueue}, queues.all())
			require.Len(t, checks.all(), 1)
			assert.Equal(t, "unit-q", checks.all()[0].CatalogQueue, "the base queue's catalog")
			assert.Equal(t, tt.wantQueue != "unit-q@gpu", checks.all()[0].Pollers, "another queue than the parent's: are there workers?")
		})
	}
}

// catalogClient answers the catalog's DescribeWorkflowExecution and DescribeTaskQueue.
type catalogClient struct {
	client.Client
	catalog *core.Catalog // nil: no catalog
	pollers int
}

func (c *catalogClient) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if c.catalog == nil || id != protocol.CatalogID(c.catalog.TaskQueue) {
		return nil, serviceerror.NewNotFound("no such workflow")
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(c.catalog)
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{protocol.MemoCatalog: p}}}}, nil
}

func (c *catalogClient) DescribeTaskQueue(context.Context, string, enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	resp := &workflowservice.DescribeTaskQueueResponse{}
	for range c.pollers {
		resp.Pollers = append(resp.Pollers, &taskqueuepb.PollerInfo{Identity: "w"})
	}
	return resp, nil
}

func TestChildServedReadsTheCatalogAndThePollers(t *testing.T) {
	cat := &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "release"}}}
	tests := []struct {
		name    string
		tc      *catalogClient
		q       servedQuery
		wantWhy string
	}{
		{"listed", &catalogClient{catalog: cat}, servedQuery{Workflow: "release", CatalogQueue: "q", TaskQueue: "q"}, ""},
		{"not listed", &catalogClient{catalog: cat}, servedQuery{Workflow: "other", CatalogQueue: "q", TaskQueue: "q"},
			"the catalog of q does not list it"},
		{"no catalog: cannot tell", &catalogClient{}, servedQuery{Workflow: "other", CatalogQueue: "q", TaskQueue: "q"}, ""},
		{"tagged, polled", &catalogClient{catalog: cat, pollers: 1},
			servedQuery{Workflow: "release", CatalogQueue: "q", TaskQueue: "q@gpu", Pollers: true}, ""},
		{"tagged, nobody polls", &catalogClient{catalog: cat},
			servedQuery{Workflow: "release", CatalogQueue: "q", TaskQueue: "q@gpu", Pollers: true}, "no worker with those tags polls it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans, err := childServed(context.Background(), tt.tc, tt.q)
			require.NoError(t, err)
			assert.Equal(t, tt.wantWhy, ans.Unserved)
		})
	}
	_, err := childServed(context.Background(), &catalogClient{}, servedQuery{Workflow: "x", CatalogQueue: "q", Pollers: true})
	require.NoError(t, err, "no catalog: the pollers are not asked")
	assert.False(t, errors.Is(err, core.ErrNoCatalog))
}

func TestDetachedChildInABranchIsStartedAndLeft(t *testing.T) {
	var done callLog[time.Time]
	child := Define("unit/left-child", func(ctx *Context, _ none) (none, error) {
		if err := ctx.Sleep("wait", 10*time.Minute); err != nil {
			return none{}, err
		}
		done.add(ctx.Now())
		return none{}, nil
	})
	parent := Define("unit/leaving-parent", func(ctx *Context, _ none) (string, error) {
		Async(ctx, "bg", func(bc *Context) (none, error) { return Child(bc, "smoke", child, none{}, Detached()) })
		return "left", ctx.Sleep("a-little", time.Minute)
	})
	env := newUnitEnv(t, runConfig{}, parent, child)
	env.ExecuteWorkflow(parent.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "the parent completes without waiting for its detached child")
	require.Len(t, done.all(), 1, "the child completes after its parent")
}
