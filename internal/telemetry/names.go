package telemetry

import (
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/internal/protocol"
)

// Exported names the metric families gateflow's own instruments get on /metrics, as
// Prometheus sees them (a timer becomes a histogram in seconds: NAME_seconds_bucket,
// _sum and _count). TestExportedNamesAreServed records every instrument and checks the
// list; the Grafana dashboard may name only these and SDKExported.
var Exported = []string{
	protocol.MetricRuns,
	protocol.MetricRunsStarted,
	protocol.MetricActiveRuns,
	protocol.MetricRunDuration + "_seconds",
	protocol.MetricRunCost,
	protocol.MetricBudgetExceeded,
	protocol.MetricStepDuration + "_seconds",
	protocol.MetricGatesOpened,
	protocol.MetricGatesDecided,
	protocol.MetricPendingGates,
	protocol.MetricApprovalWait + "_seconds",
	protocol.MetricBreakerState,
	protocol.MetricFastFailures,
	protocol.MetricEventDeliveryFailures,
}

// SDKExported names some of the Temporal SDK's metric families on /metrics, all served
// once a worker has run a flow with a step (the SDK has more; these are the ones the
// dashboard uses). Not temporal_activity_schedule_to_start_latency: the SDK records it
// for polled activity tasks only, and most steps start eagerly, without a poll.
var SDKExported = []string{
	"temporal_request_total",
	"temporal_request_latency_seconds",
	"temporal_workflow_completed_total",
	"temporal_workflow_endtoend_latency_seconds",
	"temporal_workflow_task_execution_latency_seconds",
	"temporal_workflow_task_schedule_to_start_latency_seconds",
	"temporal_activity_execution_latency_seconds",
}

// Buckets are the histogram bucket bounds in seconds, by instrument; other timers (the
// SDK's latencies) get LatencyBuckets.
var Buckets = map[string][]float64{
	protocol.MetricStepDuration: seconds(100*time.Millisecond, 500*time.Millisecond, time.Second, 5*time.Second,
		10*time.Second, 30*time.Second, time.Minute, 5*time.Minute, 15*time.Minute, time.Hour, 4*time.Hour),
	protocol.MetricRunDuration: seconds(time.Second, 10*time.Second, time.Minute, 5*time.Minute, 15*time.Minute,
		time.Hour, 4*time.Hour, 12*time.Hour, 24*time.Hour, 72*time.Hour, 168*time.Hour),
	protocol.MetricApprovalWait: seconds(10*time.Second, time.Minute, 5*time.Minute, 15*time.Minute, time.Hour,
		4*time.Hour, 12*time.Hour, 24*time.Hour, 72*time.Hour, 168*time.Hour),
}

// LatencyBuckets are the bounds of the SDK's timers (request and task latencies).
var LatencyBuckets = seconds(time.Millisecond, 5*time.Millisecond, 10*time.Millisecond, 25*time.Millisecond,
	50*time.Millisecond, 100*time.Millisecond, 250*time.Millisecond, 500*time.Millisecond, time.Second,
	2500*time.Millisecond, 5*time.Second, 10*time.Second, 30*time.Second, time.Minute)

func seconds(ds ...time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// IsExported reports whether name is a metric family gateflow serves (Exported or
// SDKExported); for a histogram, NAME_bucket, NAME_sum and NAME_count are too.
func IsExported(name string) bool {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && isHistogram(base) {
			return true
		}
	}
	return slices.Contains(Exported, name) || slices.Contains(SDKExported, name)
}

func isHistogram(family string) bool {
	return strings.HasSuffix(family, "_seconds") && (slices.Contains(Exported, family) || slices.Contains(SDKExported, family))
}
