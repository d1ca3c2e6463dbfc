package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/service"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/internal/protocol"
)

// TestFlowdefStepService: a definition's `service:` routes the step to the service's
// activity task queue (its shared rate limit and breaker), as flow.UseService does, and
// with.idempotency_header renames the stable idempotency header of an http step. A
// service the workers did not declare is refused by validation against their registry.
func TestFlowdefStepService(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-Request-Key")+"|"+r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok": true}`))
	}))
	t.Cleanup(srv.Close)
	queue := fmt.Sprintf("flowdef-service-%d", time.Now().UnixNano())
	def, err := flowdef.Check("it-service.yaml", []byte(`
name: it-service
steps:
  - id: call
    uses: http
    service: status
    with: {method: POST, url: "`+srv.URL+`/s", json: {a: 1}, idempotency_header: X-Request-Key}
  - {id: done, finish: {output: {ok: "${{ steps.call.output.ok }}"}}}
`), &flowdef.StaticRegistry{Services: []string{"status"}})
	require.NoError(t, err)
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: approval.StaticDirectory{}, StopTimeout: 5 * time.Second,
		Services: []service.Def{service.Declare("status", service.Options{RatePerSecond: 50})}}, buildInterp(t, def))
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, "it-service", nil, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"ok": true}`, string(d.Result))

	mu.Lock()
	require.Len(t, keys, 1)
	assert.Regexp(t, `^gf1-[0-9a-f]{32}\|$`, keys[0], "the key under the renamed header, no Idempotency-Key")
	mu.Unlock()

	it := shared.tc.GetWorkflowHistory(ctx, run.ID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var queues []string
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "gateflow.http" {
			queues = append(queues, a.GetTaskQueue().GetName())
		}
	}
	assert.Equal(t, []string{protocol.ServiceQueue(queue, "status")}, queues, "the step ran on the service's task queue")

	reg, err := c.Registry(ctx)
	require.NoError(t, err)
	assert.True(t, reg.HasService("status"))
	bad, err := flowdef.Parse("bad.yaml", []byte("name: it-service-bad\nsteps:\n  - {id: s, uses: shell, service: github, with: {command: hi}}\n"))
	require.NoError(t, err)
	err = flowdef.Validate(bad, reg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.yaml:3:35: step 's': no declared service 'github'")
}
