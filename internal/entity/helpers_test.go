package entity

import (
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// newTestEnv is a quiet test environment with fn registered under the workflow type name.
func newTestEnv(t *testing.T, name string, fn any) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	// The continue-as-new tests send 500 messages; under -race on a small machine a
	// workflow task can take longer than the default 1s deadlock detection.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Second})
	env.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	return env
}

// callLog keeps what mocks were called with, in call order.
type callLog[T any] struct {
	mu    sync.Mutex
	calls []T
}

func (l *callLog[T]) add(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, v)
}

func (l *callLog[T]) all() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.calls...)
}

// ping is the payload of the test signals.
type ping struct {
	N int `json:"n"`
}

// signalAt sends the Signal name with arg at the virtual time d after the start.
func signalAt(env *testsuite.TestWorkflowEnvironment, d time.Duration, name string, arg any) {
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(name, arg) }, d)
}

// startedBySignal runs wf the way SignalWithStartWorkflow starts an entity: its first
// workflow task already holds the message that started it. (The test environment can only
// signal a run once it is running.)
func startedBySignal[S any](wf func(workflow.Context, S) error, names ...string) func(workflow.Context, S) error {
	return func(ctx workflow.Context, in S) error {
		chans := make([]workflow.ReceiveChannel, len(names))
		for i, n := range names {
			chans[i] = workflow.GetSignalChannel(ctx, n)
		}
		if err := workflow.Await(ctx, func() bool {
			for _, c := range chans {
				if c.Len() > 0 {
					return true
				}
			}
			return false
		}); err != nil {
			return err
		}
		return wf(ctx, in)
	}
}

// stopSignal ends a workflow run by stoppable.
const stopSignal = "test.stop"

// stoppable runs wf, an entity that never ends by itself, until it returns or the test
// sends stopSignal (then it returns nil).
func stoppable[S any](wf func(workflow.Context, S) error) func(workflow.Context, S) error {
	return func(ctx workflow.Context, in S) error {
		var err error
		done := false
		workflow.Go(ctx, func(gctx workflow.Context) {
			err = wf(gctx, in)
			done = true
		})
		stopped := false
		workflow.Go(ctx, func(gctx workflow.Context) {
			workflow.GetSignalChannel(gctx, stopSignal).Receive(gctx, nil)
			stopped = true
		})
		if aerr := workflow.Await(ctx, func() bool { return done || stopped }); aerr != nil {
			return aerr
		}
		return err
	}
}

// continuedAs checks that err is a continue-as-new to workflowType and decodes its input.
func continuedAs[S any](t *testing.T, err error, workflowType string) S {
	t.Helper()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "want continue-as-new, got %v", err)
	assert.Equal(t, workflowType, can.WorkflowType.Name)
	var next S
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	return next
}
