package flowctl

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/telemetry"
)

// traced adds the SDK's tracing interceptor to o when the OTEL_* variables configure an
// exporter (telemetry.Setup): flowctl's calls (a start, an Update) are then spans of the
// runs' traces, as service "flowctl" unless OTEL_SERVICE_NAME says otherwise.
func (a *app) traced(ctx context.Context, o *client.Options) error {
	tel, err := telemetry.Setup(ctx, telemetry.Options{ServiceName: "flowctl"})
	if err != nil {
		return usageErr("%v", err)
	}
	tel.Apply(o)
	a.telemetry = tel
	return nil
}

// closeTelemetry sends the spans not exported yet.
func (a *app) closeTelemetry() {
	if a.telemetry == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.telemetry.Shutdown(ctx); err != nil {
		fmt.Fprintln(a.stderr, "flowctl:", err)
	}
}
