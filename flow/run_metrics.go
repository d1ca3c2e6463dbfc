package flow

import (
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
)

// Run metrics go through workflow.GetMetricsHandler: the SDK drops what a replay records,
// so a run counts once however often its history is replayed. The names are in
// internal/protocol/metrics.go; internal/telemetry exports them.

// metricsStarted counts the run as started and active (not a plan).
func (rt *runner) metricsStarted(wctx workflow.Context) {
	if rt.setup.plan {
		return
	}
	m := workflow.GetMetricsHandler(wctx).WithTags(map[string]string{"workflow": rt.info.Name})
	m.Counter(protocol.MetricRunsStarted).Inc(1)
	m.Counter(protocol.MetricActiveRuns).Inc(1)
}

// metricsEnded records the end of a run: its status, duration and cost, and that it is no
// longer active.
func (rt *runner) metricsEnded(wctx workflow.Context, status runs.Status) {
	if rt.setup.plan {
		return
	}
	m := workflow.GetMetricsHandler(wctx).WithTags(map[string]string{"workflow": rt.info.Name})
	m.Counter(protocol.MetricActiveRuns).Inc(-1)
	ms := m.WithTags(map[string]string{"status": string(status)})
	ms.Counter(protocol.MetricRuns).Inc(1)
	ms.Timer(protocol.MetricRunDuration).Record(runNow(wctx).Sub(rt.state.StartedAt))
	m.Counter(protocol.MetricRunCost).Inc(rt.state.CostUSD.Shift(6).IntPart())
	if status == runs.StatusBudgetExceeded {
		m.Counter(protocol.MetricBudgetExceeded).Inc(1)
	}
}

// stepMetric records a step's duration by kind and status. The timer of each kind and
// status is made once per run (a step metric costs no allocation after that); it drops
// what a replay records, as the handler it comes from does.
func (c *Context) stepMetric(kind runs.StepKind, status runs.StepStatus, d time.Duration) {
	key := stepTimerKey{kind, status}
	t, ok := c.run.report.stepTimers[key]
	if !ok {
		t = workflow.GetMetricsHandler(c.wctx).WithTags(map[string]string{
			"workflow": c.run.info.Name, "kind": string(kind), "status": string(status),
		}).Timer(protocol.MetricStepDuration)
		if c.run.report.stepTimers == nil {
			c.run.report.stepTimers = map[stepTimerKey]client.MetricsTimer{}
		}
		c.run.report.stepTimers[key] = t
	}
	t.Record(d)
}

// stepTimerKey names one of a run's step duration timers.
type stepTimerKey struct {
	kind   runs.StepKind
	status runs.StepStatus
}

// gateOpened counts an approval gate as opened and pending.
func (c *Context) gateOpened() {
	m := workflow.GetMetricsHandler(c.wctx).WithTags(map[string]string{"workflow": c.run.info.Name})
	m.Counter(protocol.MetricGatesOpened).Inc(1)
	m.Counter(protocol.MetricPendingGates).Inc(1)
}

// gateClosed records how an approval gate closed and how long it waited.
func (c *Context) gateClosed(outcome string, waited time.Duration) {
	m := workflow.GetMetricsHandler(c.wctx).WithTags(map[string]string{"workflow": c.run.info.Name})
	m.Counter(protocol.MetricPendingGates).Inc(-1)
	mo := m.WithTags(map[string]string{"outcome": outcome})
	mo.Counter(protocol.MetricGatesDecided).Inc(1)
	mo.Timer(protocol.MetricApprovalWait).Record(waited)
}
