package integration

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

func TestConcurrencyLimitOfTwoWithFiveRuns(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	file := filepath.Join(t.TempDir(), "log")
	var ids []string
	for i := 0; i < 5; i++ {
		run, err := c.Start(ctx, "test.busy", testflows.FileInput{File: file}, core.StartOptions{ConcurrencyLimits: map[string]int{"builders": 2}})
		require.NoError(t, err)
		ids = append(ids, run.ID)
	}
	for _, id := range ids {
		d, err := c.Wait(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	}
	running, most := 0, 0
	for _, l := range lines(t, file) {
		if l == "start" {
			running++
		} else {
			running--
		}
		most = max(most, running)
	}
	assert.Equal(t, 2, most, "never more than 2 at once, and the limit was used")
	assert.Equal(t, 5, count(lines(t, file), "end"))
}

func TestTerminatedHolderPermitComesBackAndExclusiveKeyRefuses(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	holder, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{ConcurrencyKey: "deploy-prod"})
	require.NoError(t, err)
	eventually(t, c, holder.ID, "holds the key and waits", waitingFor("approval:gate"))

	_, err = c.Start(ctx, "test.earlygate", nil, core.StartOptions{ConcurrencyKey: "deploy-prod"})
	var re *flowclient.RunExistsError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, "concurrency key deploy-prod is held by run "+holder.ID, err.Error())

	// A group permit held by a run that is then terminated comes back.
	file := filepath.Join(t.TempDir(), "log")
	g1, err := c.Start(ctx, "test.earlygate", nil, core.StartOptions{ConcurrencyLimits: map[string]int{"solo": 1}})
	require.NoError(t, err)
	eventually(t, c, g1.ID, "holds the permit", waitingFor("approval:gate"))
	g2, err := c.Start(ctx, "test.busy", testflows.FileInput{File: file}, core.StartOptions{ConcurrencyLimits: map[string]int{"solo": 1}})
	require.NoError(t, err)
	eventually(t, c, g2.ID, "waits for the permit", waitingFor("permit:solo"))
	require.NoError(t, shared.tc.TerminateWorkflow(ctx, g1.ID, "", "stuck"))
	d, err := c.Wait(ctx, g2.ID)
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d.Status, "the terminated holder's permit was reclaimed")

	require.NoError(t, shared.tc.TerminateWorkflow(ctx, holder.ID, "", "done"))
	require.Eventually(t, func() bool {
		_, err := c.Start(ctx, "hello", nil, core.StartOptions{ConcurrencyKey: "deploy-prod"})
		return err == nil
	}, 20*time.Second, 200*time.Millisecond, "the key is free once its holder ended")
}

// TestConcurrentStartsWithOneExclusiveKeyStartOneRun: the key is claimed in one Update of
// its semaphore before the run starts, so of ten starts at once exactly one starts.
func TestConcurrentStartsWithOneExclusiveKeyStartOneRun(t *testing.T) {
	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	const n = 10
	var wg sync.WaitGroup
	started := make([]*core.Run, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			started[i], errs[i] = c.Start(ctx, "test.earlygate", nil, core.StartOptions{ConcurrencyKey: "race-key"})
		})
	}
	wg.Wait()
	var winner *core.Run
	for i := range n {
		if errs[i] == nil {
			if winner != nil {
				t.Fatalf("a second start with the key was accepted: %s and %s", winner.ID, started[i].ID)
			}
			winner = started[i]
		}
	}
	require.NotNil(t, winner, "one start gets the key: %v", errs)
	for i := range n {
		if errs[i] != nil {
			var re *flowclient.RunExistsError
			require.True(t, errors.As(errs[i], &re), "%v", errs[i])
			assert.Equal(t, "concurrency key race-key is held by run "+winner.ID, errs[i].Error())
		}
	}
	eventually(t, c, winner.ID, "holds the key and waits", waitingFor("approval:gate"))
	require.NoError(t, shared.tc.TerminateWorkflow(ctx, winner.ID, "", "done"))
	var next *core.Run
	var err error
	require.Eventually(t, func() bool {
		next, err = c.Start(ctx, "hello", nil, core.StartOptions{ConcurrencyKey: "race-key"})
		return err == nil && next != nil
	}, 20*time.Second, 200*time.Millisecond, "the key is free once its holder ended")
	d, err := c.Wait(ctx, next.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	require.Eventually(t, func() bool {
		holder, err := entity.ConcurrencyHolder(ctx, shared.tc, shared.queue, "key:race-key")
		return err == nil && holder == ""
	}, 20*time.Second, 200*time.Millisecond, "the key is free again once the next run ended")
}
