package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/runs"
)

// TestAgentLoopWorkerKilledDuringTurnThree: a worker process runs an agent loop of 4
// turns whose tool is an MCP tool of the example triage-tools server over stdio (turns 1
// to 3 call it once each, turn 4 answers). The provider holds the third request; the
// test SIGKILLs the worker while it waits and starts a new worker process, and the
// provider answers from then on. The provider is asked exactly once per completed turn
// plus the interrupted request (5 requests, the 3rd and 4th the same conversation), the
// MCP server runs each tool call exactly once, the run completes, and its cost is what
// the provider reported for the completed turns plus the lost attempt's reservation (an
// attempt lost in flight is charged its reservation, unconfirmed: run_paid.go).
func TestAgentLoopWorkerKilledDuringTurnThree(t *testing.T) {
	dir := t.TempDir()
	bin, count := filepath.Join(dir, "triage-tools"), filepath.Join(dir, "calls")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/gateflow/gateflow/examples/mcp/triage-tools").CombinedOutput()
	require.NoError(t, err, "building triage-tools: %s", out)

	services := []string{"checkout", "search", "payments"}
	call := func(service string, in, out int64) loopTurn {
		return loopTurn{calls: [][2]string{{"lookup_runbook", fmt.Sprintf(`{"service":%q}`, service)}}, in: in, out: out}
	}
	// The requests' answers, by index; the third (index 2) is held until its worker dies.
	answers := map[int]loopTurn{0: call(services[0], 400, 20), 1: call(services[1], 900, 25),
		3: call(services[2], 1500, 30), 4: {text: "runbooks read: all three services are fine", in: 2100, out: 40}}
	third, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := startChatProvider(t, func(n int, _ []byte, r *http.Request) (loopTurn, bool) {
		if n == 2 {
			once.Do(func() { close(third) })
			select {
			case <-r.Context().Done(): // the worker was killed: its connection is gone
			case <-release:
			}
			return loopTurn{}, false
		}
		a, ok := answers[n]
		return a, ok
	})
	t.Cleanup(func() { close(release) })

	queue := uniqueQueue("agent-kill")
	args := []string{"--openai-url", srv.URL + "/v1", "--mcp", "triage=" + bin + " --count-file " + count}
	worker := startTestworker(t, queue, args...)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, 3*time.Minute)
	run, err := c.Start(ctx, "test.agent.kill", "read the runbooks of checkout, search and payments", core.StartOptions{})
	require.NoError(t, err)

	select {
	case <-third:
	case <-ctx.Done():
		t.Fatalf("the third request never came; requests so far: %d", len(srv.requests()))
	}
	require.NoError(t, worker.Process.Signal(syscall.SIGKILL))
	_ = worker.Wait()
	startTestworker(t, queue, args...)

	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var result string
	require.NoError(t, json.Unmarshal(d.Result, &result))
	assert.Equal(t, "runbooks read: all three services are fine", result)

	reqs := srv.requests()
	require.Len(t, reqs, 5, "one request per completed turn (4) plus the interrupted one")
	assert.JSONEq(t, reqs[2], reqs[3], "the interrupted turn is asked again with the same conversation")
	assert.NotEqual(t, reqs[1], reqs[2])

	calls, err := os.ReadFile(count)
	require.NoError(t, err)
	var want []string
	for _, s := range services {
		want = append(want, "lookup_runbook "+s)
	}
	assert.Equal(t, want, strings.Split(strings.TrimSpace(string(calls)), "\n"), "each tool call ran exactly once")

	var ids []string
	for _, s := range d.State.Steps {
		ids = append(ids, s.ActivityID)
	}
	assert.Equal(t, []string{"triage", "triage/tools", "triage/turn-1", "triage/lookup_runbook", "triage/turn-2", "triage/lookup_runbook#2",
		"triage/turn-3", "triage/lookup_runbook#3", "triage/turn-4"}, ids)
	_, scheduled, _ := historyCount(t, ctx, run.ID, activities.AgentTurnActivity)
	assert.Equal(t, 5, scheduled, "four turns, the third made twice")

	// The cost: what the provider reported for the turns that completed, plus the lost
	// attempt's reservation (the third turn's worst case), charged as unconfirmed.
	turn3 := stepNamed(t, d.State.Steps, "turn-3")
	require.NotNil(t, turn3.CostLimitUSD, "the third turn reserved its worst case")
	lost := *turn3.CostLimitUSD
	assert.True(t, lost.IsPositive())
	var unconfirmed []runs.Attempt
	for _, a := range turn3.Attempts {
		if a.Unconfirmed {
			unconfirmed = append(unconfirmed, a)
		}
	}
	require.Len(t, unconfirmed, 1, "one attempt lost with its worker: %+v", turn3.Attempts)
	assert.True(t, lost.Equal(unconfirmed[0].CostUSD), "the lost attempt is charged its reservation: %s, %s", unconfirmed[0].CostUSD, lost)
	assert.True(t, lost.Equal(turn3.UnconfirmedUSD), "%s", turn3.UnconfirmedUSD)
	reported := decimal.Zero
	for _, n := range []int{0, 1, 3, 4} {
		reported = reported.Add(priced(t, answers[n].in, answers[n].out))
	}
	assert.True(t, reported.Add(lost).Equal(d.State.CostUSD), "want %s + %s, got %s", reported, lost, d.State.CostUSD)
	assert.True(t, d.State.CostUSD.Equal(stepNamed(t, d.State.Steps, "triage").CostUSD), "the agent step sums its turns")
}
