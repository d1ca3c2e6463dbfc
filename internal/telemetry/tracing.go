package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// DefaultServiceName is the service name when OTEL_SERVICE_NAME is not set.
const DefaultServiceName = "flow-worker"

// Span attributes gateflow adds to the SDK's spans (RunWorkflow:TYPE, RunActivity:TYPE).
const (
	// AttrFlow is the flow's name (the workflow type).
	AttrFlow = attribute.Key("gateflow.flow")
	// AttrRunID is the run's ID (the workflow ID).
	AttrRunID = attribute.Key("gateflow.run_id")
	// AttrStep is the step's ID (its name; in a branch BRANCH/NAME; a repeated name NAME#N).
	AttrStep = attribute.Key("gateflow.step")
)

// Options configure Setup.
type Options struct {
	// ServiceName is the default service name; OTEL_SERVICE_NAME overrides it. Default
	// DefaultServiceName.
	ServiceName string
	// Metrics asks for a Prometheus-served MeterProvider (Telemetry.Metrics).
	Metrics bool
	// SpanExporter, when set, receives every span synchronously instead of the exporter
	// the OTEL_* variables choose (tests: tracetest.NewInMemoryExporter; read its spans
	// before Telemetry.Shutdown, which empties it).
	SpanExporter sdktrace.SpanExporter
}

// Telemetry is what Setup built; Apply puts it in a client's options.
type Telemetry struct {
	// Metrics is the metrics provider (nil unless Options.Metrics).
	Metrics *Metrics
	// Tracing is the SDK's tracing interceptor with gateflow's attributes (nil when no
	// exporter is configured: tracing costs nothing then).
	Tracing  interceptor.Interceptor
	provider *sdktrace.TracerProvider
}

// Setup builds the telemetry the options and the OTEL_* variables ask for. Tracing is on
// when OTEL_TRACES_EXPORTER is "otlp", or it is unset and OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is; OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks
// "http/protobuf" (the default) or "grpc"; the exporters read the other OTLP variables
// (headers, insecure, timeout) and the SDK the OTEL_TRACES_SAMPLER and OTEL_BSP_ ones.
// OTEL_SDK_DISABLED=true turns tracing off.
func Setup(ctx context.Context, o Options) (*Telemetry, error) {
	res, err := newResource(o.ServiceName)
	if err != nil {
		return nil, err
	}
	t := &Telemetry{}
	if o.Metrics {
		if t.Metrics, err = NewMetrics(res); err != nil {
			return nil, err
		}
	}
	var sp sdktrace.SpanProcessor
	if o.SpanExporter != nil {
		sp = sdktrace.NewSimpleSpanProcessor(o.SpanExporter)
	} else {
		exp, err := exporterFromEnv(ctx)
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, err
		}
		if exp != nil {
			sp = sdktrace.NewBatchSpanProcessor(exp)
		}
	}
	if sp != nil {
		t.provider = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(sp))
		base, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: t.provider.Tracer("gateflow")})
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, fmt.Errorf("tracing: %w", err)
		}
		t.Tracing = tracingInterceptor{Interceptor: base}
	}
	return t, nil
}

// Apply sets the metrics handler and adds the tracing interceptor to client options (a
// worker built on that client traces too).
func (t *Telemetry) Apply(co *client.Options) {
	if t.Metrics != nil {
		co.MetricsHandler = t.Metrics.Handler()
	}
	if t.Tracing != nil {
		co.Interceptors = append(co.Interceptors, t.Tracing)
	}
}

// Shutdown flushes the spans not exported yet and stops the providers.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	if t.provider != nil {
		if err := t.provider.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("tracing: shut down: %w", err))
		}
	}
	if t.Metrics != nil {
		if err := t.Metrics.Shutdown(); err != nil {
			errs = append(errs, fmt.Errorf("metrics: shut down: %w", err))
		}
	}
	return errors.Join(errs...)
}

func newResource(name string) (*resource.Resource, error) {
	if env := os.Getenv("OTEL_SERVICE_NAME"); env != "" {
		name = env
	}
	if name == "" {
		name = DefaultServiceName
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", name)))
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	return res, nil
}

// exporterFromEnv is the OTLP exporter the OTEL_* variables ask for, or nil.
func exporterFromEnv(ctx context.Context) (sdktrace.SpanExporter, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	switch kind := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); kind {
	case "none":
		return nil, nil
	case "":
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: gateflow exports traces with \"otlp\" or not at all (\"none\")", kind)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var c otlptrace.Client
	switch protocol {
	case "", "http/protobuf":
		c = otlptracehttp.NewClient()
	case "grpc":
		c = otlptracegrpc.NewClient()
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: use \"http/protobuf\" or \"grpc\"", protocol)
	}
	exp, err := otlptrace.New(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	return exp, nil
}

// tracingInterceptor is the SDK's tracing interceptor; inside its spans it adds gateflow's
// attributes (the flow, the run, the step).
type tracingInterceptor struct {
	interceptor.Interceptor
}

func (t tracingInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	in := &activityAttrs{}
	in.Next = next
	return t.Interceptor.InterceptActivity(ctx, in)
}

func (t tracingInterceptor) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	in := &workflowAttrs{}
	in.Next = next
	return t.Interceptor.InterceptWorkflow(ctx, in)
}

type activityAttrs struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *activityAttrs) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if span := spanFromContext(ctx); span != nil && activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		span.SetAttributes(AttrFlow.String(info.WorkflowType.Name), AttrRunID.String(info.WorkflowExecution.ID),
			AttrStep.String(info.ActivityID))
	}
	return a.Next.ExecuteActivity(ctx, in)
}

type workflowAttrs struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (w *workflowAttrs) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	// Attributes only: no commands, nothing a replay could disagree with.
	if span, ok := temporalotel.SpanFromWorkflowContext(ctx); ok {
		info := workflow.GetInfo(ctx)
		span.SetAttributes(AttrFlow.String(info.WorkflowType.Name), AttrRunID.String(info.WorkflowExecution.ID))
	}
	return w.Next.ExecuteWorkflow(ctx, in)
}

func spanFromContext(ctx context.Context) trace.Span {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return nil
	}
	return span
}
