package flow

import (
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/runs"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// setStatus records the run status and upserts FlowStatus (and the cost attributes) when
// they changed.
func (c *Context) setStatus(s runs.Status) {
	s = c.run.pause.statusFor(s) // run_pause.go: a paused run stays paused until resumed
	c.run.state.Status = s
	if c.run.plan {
		return // a plan is not a run: no FlowStatus, so lists leave it out
	}
	sa := workflow.GetTypedSearchAttributes(c.wctx)
	var updates []temporal.SearchAttributeUpdate
	if cur, _ := sa.GetKeyword(searchattr.StatusKey); cur != string(s) {
		updates = append(updates, searchattr.StatusKey.ValueSet(string(s)))
	}
	c.run.state.Waiting = c.run.people.waitingList()
	if cur, _ := sa.GetKeyword(searchattr.StatusKey); cur != string(s) && c.run.emits(events.RunStatus) {
		c.run.emit(c.wctx, events.RunStatus, "", string(s), c.run.state.Error, map[string]any{"waiting": c.run.state.Waiting})
	}
	if u, ok := c.run.people.waitingUpdate(sa); ok {
		updates = append(updates, u)
	}
	cost, _ := c.run.state.CostUSD.Float64()
	if cur, ok := sa.GetFloat64(searchattr.CostUSDKey); (ok || !c.run.state.CostUSD.IsZero()) && cur != cost {
		updates = append(updates, searchattr.CostUSDKey.ValueSet(cost))
	}
	if len(updates) == 0 {
		return
	}
	updates = append(updates, c.run.pendingSA...)
	c.run.pendingSA = nil
	if err := workflow.UpsertTypedSearchAttributes(c.wctx, updates...); err != nil {
		c.Logger().Warn("upsert search attributes", "status", s, "error", err)
	}
}

func (rt *runner) publish() {
	workflow.SetCurrentDetails(rt.root, renderDetails(rt.state, runNow(rt.root), rt.conn, &rt.details))
}
