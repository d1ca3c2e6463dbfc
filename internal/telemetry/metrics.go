package telemetry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"

	"github.com/gateflow/gateflow/internal/protocol"
)

// Metrics is an OTel MeterProvider whose metrics are served in the Prometheus text
// format: the Temporal SDK's and gateflow's (through Handler), and the Go runtime's and
// the process's.
type Metrics struct {
	provider *sdkmetric.MeterProvider
	registry *prometheus.Registry
	handler  client.MetricsHandler
	serve    http.Handler
}

// NewMetrics builds the provider with the resource res (nil: the default resource).
func NewMetrics(res *resource.Resource) (*Metrics, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("metrics: register the Go collector: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("metrics: register the process collector: %w", err)
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo())
	if err != nil {
		return nil, fmt.Errorf("metrics: Prometheus exporter: %w", err)
	}
	opts := []sdkmetric.Option{sdkmetric.WithReader(exp), sdkmetric.WithView(bucketsView)}
	if res != nil {
		opts = append(opts, sdkmetric.WithResource(res))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	meter := mp.Meter("temporal-sdk-go")
	onError := func(err error) { otel.Handle(fmt.Errorf("metrics: %w", err)) }
	h := handler{
		counters: temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{Meter: meter, OnError: onError, UseMonotonicCounters: true}),
		upDown:   temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{Meter: meter, OnError: onError}),
	}
	return &Metrics{provider: mp, registry: reg, handler: h, serve: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})}, nil
}

// Handler is the SDK metrics handler to put in client.Options.MetricsHandler.
func (m *Metrics) Handler() client.MetricsHandler { return m.handler }

// ServeHTTP serves the metrics (the Prometheus exposition formats).
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.serve.ServeHTTP(w, r)
}

// WriteText writes the metrics in the Prometheus text format.
func (m *Metrics) WriteText(w io.Writer) error {
	families, err := m.registry.Gather()
	if err != nil {
		return fmt.Errorf("metrics: gather: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return fmt.Errorf("metrics: encode %s: %w", f.GetName(), err)
		}
	}
	return nil
}

// Shutdown stops the provider.
func (m *Metrics) Shutdown() error { return m.provider.Shutdown(context.Background()) }

// bucketsView gives every timer (a histogram in seconds) explicit buckets in seconds:
// gateflow's by Buckets, the SDK's LatencyBuckets.
func bucketsView(i sdkmetric.Instrument) (sdkmetric.Stream, bool) {
	if i.Kind != sdkmetric.InstrumentKindHistogram || i.Unit != "s" {
		return sdkmetric.Stream{}, false
	}
	bounds, ok := Buckets[i.Name]
	if !ok {
		bounds = LatencyBuckets
	}
	return sdkmetric.Stream{Name: i.Name, Description: i.Description, Unit: i.Unit,
		Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: bounds}}, true
}

// handler is the SDK's OTel handler with monotonic counters, except the counters named in
// protocol.UpDownMetrics, which go down as well (OTel UpDownCounters, gauges on /metrics).
type handler struct {
	counters, upDown client.MetricsHandler
}

func (h handler) WithTags(tags map[string]string) client.MetricsHandler {
	return handler{counters: h.counters.WithTags(tags), upDown: h.upDown.WithTags(tags)}
}

func (h handler) Counter(name string) client.MetricsCounter {
	if slices.Contains(protocol.UpDownMetrics, name) {
		return h.upDown.Counter(name)
	}
	return h.counters.Counter(name)
}

func (h handler) Gauge(name string) client.MetricsGauge { return h.counters.Gauge(name) }

func (h handler) Timer(name string) client.MetricsTimer { return h.counters.Timer(name) }

// Unwrap lets temporalotel.ExtractMetricsHandler find the OTel handler.
func (h handler) Unwrap() client.MetricsHandler { return h.counters }
