package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/telemetry"
	"github.com/gateflow/gateflow/runs"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes what POST /v1/traces gets.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	name    string
	traceID string
	attrs   map[string]string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP trace export", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				o.spans = append(o.spans, receivedSpan{service: service, name: s.GetName(),
					traceID: fmt.Sprintf("%x", s.GetTraceId()), attrs: spanAttrs(s)})
			}
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func spanAttrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, a := range s.GetAttributes() {
		m[a.GetKey()] = a.GetValue().GetStringValue()
	}
	return m
}

// ofRun are the spans received so far with the run's gateflow.run_id.
func (o *otlpReceiver) ofRun(id string) []receivedSpan {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []receivedSpan
	for _, s := range o.spans {
		if s.attrs[string(telemetry.AttrRunID)] == id {
			out = append(out, s)
		}
	}
	return out
}

// brief is what a failure shows of a scrape: gateflow's series and the SDK's families.
func brief(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "gateflow_") && !strings.Contains(l, "_bucket{") || strings.HasPrefix(l, "# TYPE temporal_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// scrapeUntil scrapes addr until the series of family with labels has value want, and
// returns the last scrape.
func scrapeUntil(t *testing.T, addr, want, family string, labels ...string) string {
	t.Helper()
	var text string
	assert.Eventually(t, func() bool {
		text = scrape(t, addr)
		return series(text, family, labels...) == want
	}, 10*time.Second, 100*time.Millisecond)
	require.Equal(t, want, series(text, family, labels...), "%s%v:\n%s", family, labels, brief(text))
	return text
}

// series is the value of the one series of family with all the labels given (label="value"
// parts), or "" when there is none.
func series(text, family string, labels ...string) string {
	for _, line := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || name != family {
			continue
		}
		lbls, value, _ := strings.Cut(rest, "} ")
		all := true
		for _, l := range labels {
			all = all && regexp.MustCompile(`(^|,)`+regexp.QuoteMeta(l)+`(,|$)`).MatchString(lbls)
		}
		if all {
			return value
		}
	}
	return ""
}

// A flow-worker process serves the OpenTelemetry metrics on --metrics-addr: histograms
// with buckets for step and run duration and approval wait, the active-runs and pending
// gates gauges going up while a run waits and down after it, and the SDK's own metrics;
// with OTEL_EXPORTER_OTLP_ENDPOINT set it exports a trace per run over OTLP, with spans for
// the run and each step carrying gateflow's attributes.
func TestWorkerProcessMetricsAndOTLPTraces(t *testing.T) {
	workerBin, _ := binaries(t)
	var recv otlpReceiver
	collector := httptest.NewServer(&recv)
	defer collector.Close()
	queue := fmt.Sprintf("otel-%d", time.Now().UnixNano())
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	worker := exec.Command(workerBin, "--task-queue", queue, "--stop-timeout", "5s", "--metrics-addr", metricsAddr)
	worker.Env = append(os.Environ(),
		"TEMPORAL_ADDRESS="+shared.srv.FrontendAddress(), "TEMPORAL_NAMESPACE="+shared.srv.Namespace(),
		"OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_SERVICE_NAME=otel-test-worker")
	banner, _, _ := startWorkerProcess(t, worker)
	assert.Contains(t, banner.String(), "Metrics          http://"+metricsAddr+"/metrics")

	// flowctl (in process) traces its start too, with the same variables.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "otel-test-flowctl")
	r := flowctlRunOn(t, queue, "start", "hello", "--input", `{"name":"otel"}`, "--wait", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var hello runs.Description
	require.NoError(t, flowctl.DecodeJSON([]byte(r.stdout), &hello), r.stdout)
	require.Equal(t, runs.StatusCompleted, hello.Status, hello.Error)

	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, 2*time.Minute)

	rollout, err := c.Start(ctx, examples.Rollout.Name(), examples.RolloutInput{Version: "9.9.9", Regions: []string{"eu"}}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, rollout.ID, "the sign-off gate open", func(d *runs.Description) bool {
		return d.State != nil && slices.ContainsFunc(d.State.Waiting, func(w string) bool { return strings.HasPrefix(w, "approval:") })
	})
	text := scrapeUntil(t, metricsAddr, "1", "gateflow_active_runs", `workflow="rollout"`) // the waiting run is active
	assert.Equal(t, "1", series(text, "gateflow_pending_gates", `workflow="rollout"`))
	assert.Equal(t, "0", series(text, "gateflow_active_runs", `workflow="hello"`), "hello has ended")
	assert.Equal(t, "1", series(text, "gateflow_runs_started_total", `workflow="rollout"`))

	_, err = c.Vote(ctx, rollout.ID, approval.Vote{Gate: "sign-off", Kind: approval.Approve, By: "carol"})
	require.NoError(t, err)
	d, err := c.Wait(ctx, rollout.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	text = scrapeUntil(t, metricsAddr, "0", "gateflow_active_runs", `workflow="rollout"`) // the run has ended
	assert.Equal(t, "0", series(text, "gateflow_pending_gates", `workflow="rollout"`))

	// Real histograms: buckets, not only _count and _sum.
	assert.Contains(t, text, "# TYPE gateflow_step_duration_seconds histogram")
	hs := []string{`workflow="hello"`, `kind="shell"`, `status="completed"`}
	assert.Equal(t, "2", series(text, "gateflow_step_duration_seconds_bucket", append(hs, `le="+Inf"`)...), "hello's two shell steps:\n%s", brief(text))
	assert.Equal(t, "2", series(text, "gateflow_step_duration_seconds_bucket", append(hs, `le="3600"`)...), "each took less than an hour")
	assert.Equal(t, "2", series(text, "gateflow_step_duration_seconds_count", hs...))
	assert.Equal(t, "1", series(text, "gateflow_run_duration_seconds_bucket", `workflow="hello"`, `status="completed"`, `le="+Inf"`))
	assert.Equal(t, "1", series(text, "gateflow_run_duration_seconds_bucket", `workflow="rollout"`, `status="completed"`, `le="+Inf"`))
	assert.Equal(t, "1", series(text, "gateflow_approval_wait_seconds_bucket", `workflow="rollout"`, `outcome="approved"`, `le="+Inf"`))
	assert.Equal(t, "1", series(text, "gateflow_runs_total", `workflow="hello"`, `status="completed"`))
	assert.Equal(t, "1", series(text, "gateflow_gates_decided_total", `workflow="rollout"`, `outcome="approved"`))
	assert.Equal(t, "0", series(text, "gateflow_run_cost_usd_micros_total", `workflow="hello"`))
	// The SDK's own metrics, through the same exporter.
	assert.Equal(t, "1", series(text, "temporal_workflow_completed_total", `workflow_type="hello"`), "the SDK's own metrics:\n%s", brief(text))
	for _, family := range telemetry.SDKExported {
		assert.Contains(t, text, "# TYPE "+family+" ", "the dashboard's SDK metric %s is served", family)
	}

	// The trace of hello over OTLP: the run and each step, in one trace.
	var spans []receivedSpan
	require.Eventually(t, func() bool {
		spans = recv.ofRun(hello.ID)
		steps := 0
		for _, s := range spans {
			if strings.HasPrefix(s.name, "RunActivity:") && (s.attrs[string(telemetry.AttrStep)] == "greet" || s.attrs[string(telemetry.AttrStep)] == "shout") {
				steps++
			}
		}
		return steps == 2 && hasSpan(spans, "RunWorkflow:hello")
	}, 20*time.Second, 100*time.Millisecond, "hello's run and step spans arrive over OTLP: %v", spans)
	for _, s := range spans {
		assert.Equal(t, spans[0].traceID, s.traceID, "one trace: %s", s.name)
		assert.Equal(t, "otel-test-worker", s.service)
		assert.Equal(t, "hello", s.attrs[string(telemetry.AttrFlow)], s.name)
	}
	var start []receivedSpan
	require.Eventually(t, func() bool {
		start = recv.named("StartWorkflow:hello", "otel-test-flowctl")
		return len(start) == 1
	}, 10*time.Second, 100*time.Millisecond, "flowctl's start span arrives")
	assert.Equal(t, spans[0].traceID, start[0].traceID, "the run's trace begins at flowctl's start")
	assert.Equal(t, hello.ID, start[0].attrs["temporalWorkflowID"])
}

// named are the spans received so far with that name from that service.
func (o *otlpReceiver) named(name, service string) []receivedSpan {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []receivedSpan
	for _, s := range o.spans {
		if s.name == name && s.service == service {
			out = append(out, s)
		}
	}
	return out
}

func hasSpan(spans []receivedSpan, name string) bool {
	for _, s := range spans {
		if s.name == name {
			return true
		}
	}
	return false
}
