package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"
)

// gateWhileInput says what the handler does while a branch waits at the gate ship:
// "sleep" (a second), "signal" (waits for proceed) or nothing.
type gateWhileInput struct {
	Then string `json:"then,omitempty"`
}

// gateWhile opens the approval gate ship in a branch and, meanwhile, does in.Then; then it
// waits for the branch.
var gateWhile = flow.Define("test.gate-while", func(ctx *flow.Context, in gateWhileInput) (string, error) {
	gate := ctx.Go("review", func(bc *flow.Context) error {
		_, err := bc.Approval("ship", approval.Request{Approvers: []string{"alice"}, Message: "ship it?"})
		return err
	})
	switch in.Then {
	case "sleep":
		if err := ctx.Sleep("cool-down", time.Second); err != nil {
			return "", err
		}
	case "signal":
		if _, err := flow.WaitSignal[string](ctx, "proceed", "", 0); err != nil {
			return "", err
		}
	}
	_, err := gate.Get(ctx)
	return "", err
})

// Issue 31 item 5: a run whose gate is open is listed by Client.Approvals and `flowctl
// approvals` whatever else it waits for — a branch at the gate while the handler slept
// (it showed running), while the handler waits for a signal (waiting_signal), a paused run
// (paused) — and the listing reads every page, here of two runs.
func TestApprovalsListsEveryOpenGateOfEveryRun(t *testing.T) {
	const queue = "approvals-list"
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, Directory: approval.StaticDirectory{}}, gateWhile)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester", PageSize: 2})
	ctx := ctxT(t, 3*time.Minute)
	var started []string
	t.Cleanup(func() { // no open gate of this test is left for later listings
		for _, id := range started {
			_ = shared.tc.TerminateWorkflow(context.Background(), id, "", "test over")
		}
	})
	start := func(then string) string {
		run, err := c.Start(ctx, gateWhile.Name(), gateWhileInput{Then: then}, core.StartOptions{})
		require.NoError(t, err)
		started = append(started, run.ID)
		return run.ID
	}

	slept := start("sleep")
	d := eventually(t, c, slept, "the sleep is over, the gate open", func(d *runs.Description) bool {
		return stepStatus(d, "cool-down") == runs.StepCompleted && waitingFor("approval:ship")(d)
	})
	assert.Equal(t, runs.StatusAwaitingApproval, d.Status, "not running: the gate is still open")

	signal := start("signal")
	d = eventually(t, c, signal, "the gate open and the signal awaited", func(d *runs.Description) bool {
		return waitingFor("approval:ship")(d) && waitingFor("signal:proceed")(d)
	})
	assert.Equal(t, runs.StatusAwaitingApproval, d.Status, "the approval ranks above the signal")

	paused := start("")
	eventually(t, c, paused, "the gate open", waitingFor("approval:ship"))
	require.NoError(t, c.PauseRun(ctx, flowclient.PauseRequest{Run: paused, Reason: "freeze", By: "bob"}))
	d = eventually(t, c, paused, "paused", func(d *runs.Description) bool { return d.Status == runs.StatusPaused })
	assert.Equal(t, []string{"approval:ship", "resume"}, d.State.Waiting)

	plain := []string{start(""), start(""), start("")}
	for _, id := range plain {
		eventually(t, c, id, "the gate open", waitingFor("approval:ship"))
	}
	want := append([]string{slept, signal, paused}, plain...)
	var listed []string
	assert.Eventually(t, func() bool {
		gates, err := c.Approvals(ctx)
		if err != nil {
			return false
		}
		listed = gatesOf(gates, want)
		return len(listed) == len(want)
	}, time.Minute, 200*time.Millisecond, "every run of the test is listed once with its gate")
	require.ElementsMatch(t, want, listed, "Client.Approvals")

	r := flowctlRunOn(t, queue, "approvals", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var gates []runs.PendingGate
	require.NoError(t, flowctl.DecodeJSON([]byte(r.stdout), &gates))
	assert.ElementsMatch(t, want, gatesOf(gates, want), "flowctl approvals lists them all")
	r = flowctlRunOn(t, queue, "approvals")
	require.Equal(t, 0, r.code, r.stderr)
	for _, id := range want {
		assert.Regexp(t, fmt.Sprintf(`(?m)^%s\s+ship\s+0/1\s+alice`, id), r.stdout)
	}
}

// gatesOf is the runs among want that gates list with the gate ship, in listing order.
func gatesOf(gates []runs.PendingGate, want []string) []string {
	var out []string
	for _, g := range gates {
		if slices.Contains(want, g.Run) && g.Gate == "ship" {
			out = append(out, g.Run)
		}
	}
	return out
}
