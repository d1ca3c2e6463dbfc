package flow

import (
	"context"
	"testing"

	"github.com/gateflow/gateflow/items"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/protocol"
)

type ticketProvider struct{}

func (ticketProvider) Name() string { return "tickets" }

func (ticketProvider) Items(_ context.Context, scope string, filter map[string]string) ([]items.Item, error) {
	return []items.Item{
		{ID: "T-1", Context: map[string]string{"cmd": "fail " + scope}},
		{ID: "T-2", DependsOn: []string{"T-1"}, Context: map[string]string{"cmd": "echo two"}},
		{ID: "T-3", Context: map[string]string{"cmd": "echo " + filter["who"]}},
	}, nil
}

var ticketsFlow = Define("unit/tickets", func(ctx *Context, provider string) ([]string, error) {
	list, err := ctx.Items("list", provider, "open", map[string]string{"who": "ada"})
	if err != nil {
		return nil, err
	}
	return ForEach(ctx, "work", list, func(c *Context, _ int, it items.Item) (string, error) {
		r, err := c.Shell("do", activities.Shell{Command: it.Context["cmd"]})
		return r.Stdout, err
	}, ForEachOptions{OnItemFail: SkipDependents})
})

func newItemsEnv(t *testing.T) (*shellTimeline, func(provider string) error) {
	env := newUnitEnv(t, runConfig{}, ticketsFlow)
	env.RegisterActivityWithOptions(newItemActivities([]items.Provider{ticketProvider{}}).items,
		activity.RegisterOptions{Name: protocol.ItemsActivity})
	tl := newShellTimeline(env)
	return tl, func(provider string) error {
		env.ExecuteWorkflow(ticketsFlow.Name(), provider)
		require.True(t, env.IsWorkflowCompleted())
		st := queryState(t, env)
		if provider == "tickets" {
			assert.Equal(t, runs.StepSkipped, stepByLabel(t, st, "work/T-2").Status, "T-2 depends on the failed T-1")
			assert.Equal(t, runs.StepCompleted, stepByLabel(t, st, "work/T-3/do").Status)
			assert.Equal(t, "3 items from tickets", stepByLabel(t, st, "list").Output)
		}
		return env.GetWorkflowError()
	}
}

func TestForEachOverProviderItemsFollowsTheirIDsAndDependencies(t *testing.T) {
	tl, run := newItemsEnv(t)
	err := run("tickets")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "foreach work: step T-1: exit code 1: fail open")
	assert.Contains(t, err.Error(), "(skipped: T-2)")
	assert.Contains(t, tl.events, "+echo ada", "the item's context reached its work")
	assert.NotContains(t, tl.events, "+echo two")
}

func TestItemsOfAnUnknownProviderFailsTheStep(t *testing.T) {
	_, run := newItemsEnv(t)
	err := run("nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `step list: no item provider "nope" on this worker (known: tickets)`)
}
