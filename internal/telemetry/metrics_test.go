package telemetry

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"

	"github.com/gateflow/gateflow/internal/protocol"
)

func text(t *testing.T, m *Metrics) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, m.WriteText(&b))
	return b.String()
}

func TestTimersAreHistogramsWithBucketsAndUpDownCountersGoDown(t *testing.T) {
	m, err := NewMetrics(nil)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Shutdown()) }()
	h := m.Handler().WithTags(map[string]string{"workflow": "hello"})
	h.WithTags(map[string]string{"kind": "shell", "status": "completed"}).Timer(protocol.MetricStepDuration).Record(2 * time.Second)
	h.WithTags(map[string]string{"kind": "shell", "status": "completed"}).Timer(protocol.MetricStepDuration).Record(20 * time.Second)
	h.Counter(protocol.MetricActiveRuns).Inc(1)
	h.Counter(protocol.MetricActiveRuns).Inc(1)
	h.Counter(protocol.MetricActiveRuns).Inc(-1)
	h.WithTags(map[string]string{"status": "completed"}).Counter(protocol.MetricRuns).Inc(1)
	m.Handler().Timer("temporal_request_latency").Record(3 * time.Millisecond)

	out := text(t, m)
	assert.Contains(t, out, "# TYPE gateflow_step_duration_seconds histogram")
	assert.Regexp(t, `(?m)^gateflow_step_duration_seconds_bucket\{[^}]*le="1"[^}]*\} 0$`, out)
	assert.Regexp(t, `(?m)^gateflow_step_duration_seconds_bucket\{[^}]*le="5"[^}]*\} 1$`, out)
	assert.Regexp(t, `(?m)^gateflow_step_duration_seconds_bucket\{[^}]*le="30"[^}]*\} 2$`, out)
	assert.Regexp(t, `(?m)^gateflow_step_duration_seconds_sum\{[^}]*workflow="hello"[^}]*\} 22$`, out)
	assert.Contains(t, out, "# TYPE gateflow_active_runs gauge")
	assert.Regexp(t, `(?m)^gateflow_active_runs\{[^}]*workflow="hello"[^}]*\} 1$`, out)
	assert.Contains(t, out, "# TYPE gateflow_runs_total counter")
	assert.Regexp(t, `(?m)^gateflow_runs_total\{[^}]*status="completed"[^}]*\} 1$`, out)
	assert.Regexp(t, `(?m)^temporal_request_latency_seconds_bucket\{[^}]*le="0.005"[^}]*\} 1$`, out, "the SDK's timers get latency buckets in seconds")
	assert.Contains(t, out, "go_goroutines", "the Go runtime's metrics too")
	assert.NotNil(t, temporalotel.ExtractMetricsHandler(m.Handler()), "the OTel handler can be found under gateflow's")

	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "gateflow_step_duration_seconds_bucket")
}

// Every instrument the runtime records gets the name Exported lists, and no other.
func TestExportedNamesAreServed(t *testing.T) {
	m, err := NewMetrics(nil)
	require.NoError(t, err)
	h := m.Handler().WithTags(map[string]string{"workflow": "w"})
	for _, name := range []string{protocol.MetricRuns, protocol.MetricRunsStarted, protocol.MetricActiveRuns,
		protocol.MetricRunCost, protocol.MetricBudgetExceeded, protocol.MetricGatesOpened, protocol.MetricGatesDecided,
		protocol.MetricPendingGates, protocol.MetricFastFailures, protocol.MetricEventDeliveryFailures} {
		h.Counter(name).Inc(1)
	}
	for _, name := range []string{protocol.MetricRunDuration, protocol.MetricStepDuration, protocol.MetricApprovalWait} {
		h.Timer(name).Record(time.Second)
		_, ok := Buckets[name]
		assert.True(t, ok, "%s has buckets of its own", name)
	}
	h.Gauge(protocol.MetricBreakerState).Update(2)

	families, err := m.registry.Gather()
	require.NoError(t, err)
	var served []string
	for _, f := range families {
		if regexp.MustCompile(`^gateflow_`).MatchString(f.GetName()) {
			served = append(served, f.GetName())
		}
	}
	slices.Sort(served)
	want := slices.Clone(Exported)
	slices.Sort(want)
	assert.Equal(t, want, served)
	for _, name := range Exported {
		assert.True(t, IsExported(name), name)
	}
	assert.True(t, IsExported("gateflow_step_duration_seconds_bucket"))
	assert.True(t, IsExported("temporal_request_latency_seconds_count"))
	assert.False(t, IsExported("gateflow_runs_total_bucket"), "a counter has no buckets")
	assert.False(t, IsExported("gateflow_step_duration_seconds_total"))
	assert.False(t, IsExported("gateflow_pending_gates_total"))
}
