package flow

import (
	"slices"
	"sort"
	"strings"

	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/runs"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// waitStatusChange is the workflow.GetVersion change that takes a run's status from all
// of its open waits by precedence (waitPrecedence, run_waits.go) and counts the waits of
// each branch. Runs recorded before it took the status of the wait that began or ended
// last and kept a set of waits; they keep doing so on replay. The version is asked only
// when the two ways disagree, so runs where they agree (no concurrent waits) record no
// marker and replay unchanged.
const waitStatusChange = "gateflow.wait-status"

// statusPart is what the run waits for, kept both ways until the version is known.
type statusPart struct {
	// now is what the run waits for across its branches (counted).
	now openWaits
	// legacy is what runs recorded before waitStatusChange kept: a set of waits, and the
	// status setStatus was last given.
	legacy map[runs.Wait]bool
	// version is waitStatusChange's version once asked.
	version workflow.Version
	asked   bool
}

// open records that the run waits for w once more.
func (p *statusPart) open(w runs.Wait) {
	p.now.open(w)
	if p.legacy == nil {
		p.legacy = map[runs.Wait]bool{}
	}
	p.legacy[w] = true
}

// close records that one wait for w ended.
func (p *statusPart) close(w runs.Wait) {
	p.now.close(w)
	delete(p.legacy, w)
}

// clear forgets every wait for w.
func (p *statusPart) clear(w runs.Wait) {
	p.now.clear(w)
	delete(p.legacy, w)
}

// legacyWaits is the legacy set, sorted by String.
func (p *statusPart) legacyWaits() []runs.Wait {
	out := make([]runs.Wait, 0, len(p.legacy))
	for w := range p.legacy {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// choose is the run's status and FlowWaiting: by precedence over the open waits (a
// terminal status as given), or, for a run recorded before waitStatusChange, legacy and
// the legacy set. The version is asked the first time the two differ.
func (p *statusPart) choose(wctx workflow.Context, legacy runs.Status, plan bool) (runs.Status, []string) {
	status, waiting := p.now.status(), waitStrings(p.now.list())
	if legacy.Terminal() {
		status = legacy
	}
	old := waitStrings(p.legacyWaits())
	if plan || (status == legacy && slices.Equal(waiting, old)) {
		return status, waiting // a plan upserts nothing: no version to keep
	}
	if !p.asked {
		p.version, p.asked = workflow.GetVersion(wctx, waitStatusChange, workflow.DefaultVersion, 1), true
	}
	if p.version == workflow.DefaultVersion {
		return legacy, old
	}
	return status, waiting
}

// waitStrings is waits in their String form (State.Waiting, FlowWaiting).
func waitStrings(waits []runs.Wait) []string {
	out := make([]string, len(waits))
	for i, w := range waits {
		out[i] = w.String()
	}
	return out
}

// wait records that the run (one of its coroutines) waits for w.
func (c *Context) wait(w runs.Wait) {
	c.run.waits.open(w)
	c.setStatus(w.Status())
	c.run.publish()
}

// unwait records that one wait for w ended; the run's status follows what it still waits
// for.
func (c *Context) unwait(w runs.Wait) {
	c.run.waits.close(w)
	c.setStatus(statusWhile(c.run.waits.legacyWaits()))
	c.run.publish()
}

// setStatus records the run status and upserts FlowStatus, FlowWaiting (and the cost
// attributes) when they changed. legacy is the status runs recorded before
// waitStatusChange take (the wait that began or ended last); newer runs take theirs from
// all their open waits (statusPart.choose), or legacy when it is terminal.
func (c *Context) setStatus(legacy runs.Status) {
	legacy = c.run.pause.statusFor(legacy) // run_pause.go: a paused run stays paused until resumed
	s, waiting := c.run.waits.choose(c.wctx, legacy, c.run.setup.plan)
	c.run.state.Status = s
	if c.run.setup.plan {
		return // a plan is not a run: no FlowStatus, so lists leave it out
	}
	sa := workflow.GetTypedSearchAttributes(c.wctx)
	var updates []temporal.SearchAttributeUpdate
	if cur, _ := sa.GetKeyword(searchattr.StatusKey); cur != string(s) {
		updates = append(updates, searchattr.StatusKey.ValueSet(string(s)))
	}
	c.run.state.Waiting = waiting
	if cur, _ := sa.GetKeyword(searchattr.StatusKey); cur != string(s) && c.run.emits(events.RunStatus) {
		c.run.emit(c.wctx, events.RunStatus, "", string(s), c.run.state.Error, map[string]any{"waiting": c.run.state.Waiting})
	}
	if u, ok := waitingUpdate(sa, waiting); ok {
		updates = append(updates, u)
	}
	cost, _ := c.run.state.CostUSD.Float64()
	if cur, ok := sa.GetFloat64(searchattr.CostUSDKey); (ok || !c.run.state.CostUSD.IsZero()) && cur != cost {
		updates = append(updates, searchattr.CostUSDKey.ValueSet(cost))
	}
	if len(updates) == 0 {
		return
	}
	updates = append(updates, c.run.report.pendingSA...)
	c.run.report.pendingSA = nil
	if err := workflow.UpsertTypedSearchAttributes(c.wctx, updates...); err != nil {
		c.Logger().Warn("upsert search attributes", "status", s, "error", err)
	}
}

// waitingUpdate is the FlowWaiting update to want when it differs from the current value.
func waitingUpdate(sa temporal.SearchAttributes, want []string) (temporal.SearchAttributeUpdate, bool) {
	cur, _ := sa.GetKeywordList(searchattr.WaitingKey)
	if strings.Join(cur, "\x00") == strings.Join(want, "\x00") {
		return nil, false
	}
	if len(want) == 0 {
		return searchattr.WaitingKey.ValueUnset(), true
	}
	return searchattr.WaitingKey.ValueSet(want), true
}

func (rt *runner) publish() {
	workflow.SetCurrentDetails(rt.root, renderDetails(rt.state, runNow(rt.root), rt.report.conn, &rt.report.details))
}
