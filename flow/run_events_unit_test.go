package flow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/events"
)

// sinkProbe records what it gets; it fails the first failures tries of each event (all,
// with failures < 0), or panics.
type sinkProbe struct {
	mu       sync.Mutex
	got      []string
	tries    map[string]int
	failures int
	panics   bool
}

func (s *sinkProbe) Deliver(_ context.Context, e events.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tries == nil {
		s.tries = map[string]int{}
	}
	s.tries[e.ID]++
	if s.panics {
		panic("sink bug")
	}
	if s.failures < 0 || s.tries[e.ID] <= s.failures {
		return errors.New("down")
	}
	s.got = append(s.got, e.ID)
	return nil
}

func (s *sinkProbe) delivered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func TestDeliverAllKeepsSinksApart(t *testing.T) {
	down, flaky, ok, broken := &sinkProbe{failures: -1}, &sinkProbe{failures: 1}, &sinkProbe{}, &sinkProbe{panics: true}
	only := &sinkProbe{}
	a := eventActivities{sinks: []events.Sink{down, flaky, ok, broken,
		events.Subscribe(only, events.Subscription{Types: []events.Type{events.StepFailed}})}}
	batch := []events.Event{{ID: "r/1", Type: events.StepStarted}, {ID: "r/2", Type: events.StepFailed}, {ID: "r/3", Type: events.RunStatus}}
	start := time.Now()
	a.deliverAll(context.Background(), batch)
	assert.Less(t, time.Since(start), 3*time.Second, "retries are short")
	assert.Equal(t, []string{"r/1", "r/2", "r/3"}, ok.got, "in order, despite the failing sinks")
	assert.Equal(t, []string{"r/1", "r/2", "r/3"}, flaky.got, "a failed try is retried for that sink")
	assert.Equal(t, map[string]int{"r/1": 2, "r/2": 2, "r/3": 2}, flaky.tries)
	assert.Empty(t, down.got)
	assert.Equal(t, map[string]int{"r/1": sinkAttempts, "r/2": sinkAttempts, "r/3": sinkAttempts}, down.tries, "each event tried sinkAttempts times")
	assert.Equal(t, sinkAttempts, broken.tries["r/1"], "a panic is a failed try")
	assert.Equal(t, []string{"r/2"}, only.got, "a subscribed sink gets only what it wants")
	assert.Equal(t, "4/*flow.sinkProbe", sinkName(4, a.sinks[4]))
}

func TestRetryDelayOnlyForAttemptsTemporalRetries(t *testing.T) {
	p := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3, NonRetryableErrorTypes: []string{"Fatal"}}
	info := activity.Info{RetryPolicy: p, Attempt: 1, ActivityID: "build"}
	d, ok := retryDelay(info, errors.New("boom"))
	require.True(t, ok)
	assert.InDelta(t, float64(time.Second), float64(d), float64(200*time.Millisecond), "attempt 2 waits the initial interval, jittered")

	d, ok = retryDelay(info, temporal.NewApplicationErrorWithOptions("slow", "Busy", temporal.ApplicationErrorOptions{NextRetryDelay: 7 * time.Second}))
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d, "an error's own delay")

	_, ok = retryDelay(info, temporal.NewNonRetryableApplicationError("no", "X", nil))
	assert.False(t, ok)
	_, ok = retryDelay(info, temporal.NewApplicationError("no", "Fatal"))
	assert.False(t, ok, "a non-retryable type")
	_, ok = retryDelay(info, temporal.NewApplicationErrorWithOptions("no", "Fatal", temporal.ApplicationErrorOptions{NextRetryDelay: time.Second}))
	assert.False(t, ok, "a non-retryable type with a delay")
	last := info
	last.Attempt = 3
	_, ok = retryDelay(last, errors.New("boom"))
	assert.False(t, ok, "the last attempt")
	_, ok = retryDelay(activity.Info{Attempt: 1}, errors.New("boom"))
	assert.False(t, ok, "no policy")

	assert.True(t, isStepActivity("gateflow.shell"))
	assert.True(t, isStepActivity("bench.echo"))
	assert.False(t, isStepActivity("gateflow.events"))
}

// hangingSink ignores its context until released.
type hangingSink struct{ release chan struct{} }

func (s hangingSink) Deliver(context.Context, events.Event) error {
	<-s.release
	return nil
}

func TestDeliverAllReturnsDespiteASinkThatHangs(t *testing.T) {
	defer func(d time.Duration) { deliveryWait = d }(deliveryWait)
	deliveryWait = 300 * time.Millisecond
	h := hangingSink{release: make(chan struct{})}
	defer close(h.release)
	ok := &sinkProbe{}
	start := time.Now()
	eventActivities{sinks: []events.Sink{h, ok}}.deliverAll(context.Background(), []events.Event{{ID: "r/1", Type: events.StepStarted}})
	took := time.Since(start)
	assert.Equal(t, []string{"r/1"}, ok.delivered())
	assert.GreaterOrEqual(t, took, deliveryWait)
	assert.Less(t, took, 3*time.Second)
}
