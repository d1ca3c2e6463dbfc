package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/telemetry"
)

// requestLog is a local HTTP server that records when each request arrived and answers
// with answer(n), n counting from 1.
type requestLog struct {
	mu    sync.Mutex
	times []time.Time
}

func (l *requestLog) serve(t *testing.T, answer func(n int) int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		l.mu.Lock()
		l.times = append(l.times, time.Now())
		n := len(l.times)
		l.mu.Unlock()
		w.WriteHeader(answer(n))
		fmt.Fprintf(w, "answer %d", n)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (l *requestLog) snapshot() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.times...)
}

// A service limited to 5 steps a second, served by two worker processes: 50 calls take no
// less than ~10s together, as the server saw them.
func TestServiceRateLimitHoldsAcrossWorkerProcesses(t *testing.T) {
	t.Parallel()
	queue := fmt.Sprintf("svc-rate-%d", time.Now().UnixNano())
	var log requestLog
	srv := log.serve(t, func(int) int { return http.StatusOK })
	startTestworker(t, queue, "--services")
	startTestworker(t, queue, "--services")

	ctx := ctxT(t, 2*time.Minute)
	svcQueue := protocol.ServiceQueue(queue, testflows.RatedService)
	require.Eventually(t, func() bool {
		resp, err := shared.tc.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
			Namespace: shared.srv.Namespace(), TaskQueue: &taskqueuepb.TaskQueue{Name: svcQueue},
			TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY})
		return err == nil && len(resp.GetPollers()) == 2
	}, 20*time.Second, 100*time.Millisecond, "both worker processes poll %s", svcQueue)

	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	const n = 50
	run, err := c.Start(ctx, testflows.RatedCalls.Name(), testflows.RatedInput{URL: srv.URL, N: n}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	// Both processes ran calls: the limit held for the two together.
	who := map[string]int{}
	it := shared.tc.GetWorkflowHistory(ctx, run.ID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			who[a.GetIdentity()]++
		}
	}
	t.Logf("calls by worker: %v", who)
	assert.Len(t, who, 2, "both worker processes ran calls")

	times := log.snapshot()
	require.Len(t, times, n)
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	span := times[n-1].Sub(times[0])
	t.Logf("%d calls in %s", n, span)
	// 5/s: 50 calls need 49/5 = 9.8s, less the server's burst of one second's worth.
	assert.GreaterOrEqual(t, span, 8*time.Second, "50 calls at 5/s across both workers")
	for i := 0; i+15 < n; i++ {
		// No two seconds saw more than two seconds' worth and a burst (5).
		assert.GreaterOrEqual(t, times[i+15].Sub(times[i]), 2*time.Second, "calls %d..%d came too fast", i, i+15)
	}
}

// A service's breaker opens after three failures in a row: the next attempt fails fast
// without calling the server and waits out the open time (the step shows waiting_service),
// the half-open probe after it succeeds and closes the breaker, and the run completes.
func TestServiceBreakerOpensFailsFastAndClosesAfterAProbe(t *testing.T) {
	t.Parallel()
	queue := fmt.Sprintf("svc-breaker-%d", time.Now().UnixNano())
	var log requestLog
	srv := log.serve(t, func(n int) int {
		if n <= testflows.FlakyTrip {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	reg, err := telemetry.NewMetrics(nil)
	require.NoError(t, err)
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc, err := client.DialContext(dctx, client.Options{HostPort: shared.srv.FrontendAddress(), Namespace: shared.srv.Namespace(),
		MetricsHandler: reg.Handler(), Logger: logging.NewSDKLogger(nil, "off")})
	require.NoError(t, err)
	defer tc.Close()
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, Identity: "breaker-worker", Services: testflows.Services()},
		testflows.ServiceFlows()...)
	require.NoError(t, w.Start())
	defer w.Stop()

	ctx := ctxT(t, time.Minute)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	run, err := c.Start(ctx, testflows.FlakyCall.Name(), srv.URL, core.StartOptions{})
	require.NoError(t, err)

	// While the breaker is open the step waits for the service, in show too.
	d := eventually(t, c, run.ID, "the step waits for the service", func(d *runs.Description) bool {
		return d.State != nil && len(d.State.Steps) == 1 && d.State.Steps[0].Status == runs.StepWaitingService
	})
	assert.Contains(t, d.State.Steps[0].Error, "waiting for service flaky (circuit breaker open)")
	r := flowctlRunOn(t, queue, "show", run.ID)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^call\s+http\s+waiting_service\b`, r.stdout)
	require.Eventually(t, func() bool {
		r := flowctlRunOn(t, queue, "services", "-o", "json")
		var list []core.ServiceStatus
		return r.code == 0 && json.Unmarshal([]byte(r.stdout), &list) == nil &&
			len(list) == 2 && list[0].Service == "flaky" && list[0].State == "open" && list[0].OpenUntil != nil
	}, 5*time.Second, 50*time.Millisecond, "flowctl services shows the open breaker")

	d, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.Equal(t, fmt.Sprintf(`"answer %d"`, testflows.FlakyTrip+1), string(d.Result))

	times := log.snapshot()
	require.Len(t, times, testflows.FlakyTrip+1, "the fast failure never reached the server: three failures and one probe")
	gap := times[testflows.FlakyTrip].Sub(times[testflows.FlakyTrip-1])
	assert.GreaterOrEqual(t, gap, testflows.FlakyOpen-200*time.Millisecond, "the probe waited out the open time")
	assert.Equal(t, testflows.FlakyTrip+2, d.State.Steps[0].Attempt, "three failures, one fast failure, the probe")

	require.Eventually(t, func() bool {
		r := flowctlRunOn(t, queue, "services")
		return r.code == 0 && bytes.Contains([]byte(r.stdout), []byte("closed"))
	}, 5*time.Second, 50*time.Millisecond, "the breaker is closed again")
	r = flowctlRunOn(t, queue+"-none", "services")
	assert.Equal(t, 3, r.code, "no services on the queue: exit 3")
	assert.Contains(t, r.stderr, "no worker of task queue "+queue+"-none declared services")

	var out bytes.Buffer
	require.NoError(t, reg.WriteText(&out))
	assert.Regexp(t, `(?m)^gateflow_service_breaker_state\{[^}]*service="flaky"[^}]*\} 0$`, out.String())
	assert.Regexp(t, `(?m)^gateflow_service_fast_failures_total\{[^}]*service="flaky"[^}]*\} 1$`, out.String())
}
