package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/runs"
)

// Issue 31 item 9: the retries of a cost-bearing step keep to the run's wall time. The
// provider fails the first call at once and never answers the next ones. With MaxWallTime
// 6s, the second attempt gets what is left of the 6s (not the step's own timeout) and no
// third attempt starts: the run fails with the wall-time guard naming the step. Before
// the fix the second attempt ran its full timeout and a third one was made.
func TestPaidRetriesStopAtTheWallTime(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
			return
		}
		select { // never answers: the attempt ends at its timeout
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	const queue = "paid-walltime"
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: approval.StaticDirectory{},
		Providers: map[string]llm.Provider{llm.ProviderOpenAI: llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1", APIKey: "sk-test"})}},
		testflows.PaidFlows()...)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, "test.paid", testflows.PaidInput{Prompt: "summarize slowly", Model: "gpt-4o-mini"},
		core.StartOptions{Guards: &runs.Guards{MaxWallTime: 6 * time.Second}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = shared.tc.TerminateWorkflow(context.Background(), run.ID, "", "test over") })
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusFailed, d.Status, d.Error)
	assert.Contains(t, d.Error, "guard: wall time")
	assert.Contains(t, d.Error, "at step summarize")
	mu.Lock()
	assert.Equal(t, 2, calls, "the failed attempt, one in the time left, and no third")
	mu.Unlock()
	step := d.State.Steps[0]
	assert.Equal(t, runs.StepFailed, step.Status)
	assert.Len(t, step.Attempts, 2, "both attempts made are recorded")
	assert.Contains(t, step.Error, "attempt 3 not made: guard: wall time")
	events := historyEvents(t, run.ID)
	assert.Equal(t, 2, countEvents(events, "ActivityTaskScheduled:gateflow.agent"), "two activity attempts")
}
