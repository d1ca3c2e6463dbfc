// Package telemetry is gateflow's OpenTelemetry wiring: the Temporal SDK's metrics handler
// (go.temporal.io/sdk/contrib/opentelemetry) on an OTel MeterProvider exported in the
// Prometheus format (Metrics, served on flow-worker's /metrics), the histogram buckets of
// gateflow's timers, the list of metric names gateflow exports (Exported; the Grafana
// dashboard in deploy/grafana names only these), and the SDK's tracing interceptor with
// gateflow attributes on the spans, exported with OTLP when the standard OTEL_* variables
// ask for it (Setup).
//
// gateflow's own instruments are recorded through the SDK's handler (see
// internal/protocol/metrics.go), so a replay never counts twice.
package telemetry
