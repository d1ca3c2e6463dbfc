package main

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

func TestStartTelemetryServesMetricsAndStops(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	var co client.Options
	var stdout, stderr bytes.Buffer
	stop, code := startTelemetry(&co, "127.0.0.1:0", &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.NotNil(t, co.MetricsHandler)
	assert.Empty(t, co.Interceptors, "no OTEL_* exporter: no tracing")
	m := regexp.MustCompile(`Metrics +(http://\S+/metrics)`).FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())

	co.MetricsHandler.WithTags(map[string]string{"workflow": "w"}).Counter("gateflow_runs_started_total").Inc(1)
	resp, err := http.Get(m[1])
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(body), `gateflow_runs_started_total{workflow="w"} 1`)

	stop()
	_, err = http.Get(m[1])
	assert.Error(t, err, "the metrics server is closed")
	assert.Empty(t, stderr.String())
}

func TestStartTelemetryRefusesBadOTelValues(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "jaeger")
	var co client.Options
	var stdout, stderr bytes.Buffer
	stop, code := startTelemetry(&co, "", &stdout, &stderr)
	assert.Nil(t, stop)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), `flow-worker: telemetry: OTEL_TRACES_EXPORTER="jaeger"`)

	t.Setenv("OTEL_TRACES_EXPORTER", "")
	stderr.Reset()
	_, code = startTelemetry(&co, "not-an-address", &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "flow-worker: --metrics-addr:")
}
