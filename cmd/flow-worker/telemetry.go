package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/telemetry"
)

// startTelemetry puts the OpenTelemetry metrics handler (when metricsAddr is set; served
// there on /metrics) and the tracing interceptor (when the OTEL_* variables configure an
// exporter) in co. stop flushes the spans and stops the metrics server; code is non-zero
// when telemetry could not start (2: a bad address or OTEL_* value).
func startTelemetry(co *client.Options, metricsAddr string, stdout, stderr io.Writer) (stop func(), code int) {
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceName: telemetry.DefaultServiceName, Metrics: metricsAddr != ""})
	if err != nil {
		fmt.Fprintln(stderr, "flow-worker: telemetry:", err)
		return nil, 2
	}
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(ctx); err != nil {
			fmt.Fprintln(stderr, "flow-worker:", err)
		}
	}
	tel.Apply(co)
	if metricsAddr == "" {
		return shutdown, 0
	}
	l, err := net.Listen("tcp", metricsAddr)
	if err != nil {
		fmt.Fprintln(stderr, "flow-worker: --metrics-addr:", err)
		shutdown()
		return nil, 2
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", tel.Metrics)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	fmt.Fprintf(stdout, "  Metrics          http://%s/metrics\n", l.Addr())
	return func() {
		_ = srv.Close()
		shutdown()
	}, 0
}
