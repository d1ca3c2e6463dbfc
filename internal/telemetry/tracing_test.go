package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func clearOTelEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SERVICE_NAME"} {
		t.Setenv(k, "")
	}
}

func TestSetupReadsTheOTelVariables(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		tracing bool
		err     string
	}{
		{name: "nothing set: no tracing", tracing: false},
		{name: "an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, tracing: true},
		{name: "a traces endpoint over gRPC", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, tracing: true},
		{name: "otlp asked for", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, tracing: true},
		{name: "none wins over an endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "an exporter gateflow has not", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin"`},
		{name: "a protocol gateflow has not", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clearOTelEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tel, err := Setup(context.Background(), Options{})
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			defer func() { _ = tel.Shutdown(context.Background()) }()
			assert.Equal(t, tc.tracing, tel.Tracing != nil)
			assert.Nil(t, tel.Metrics, "no metrics unless asked for")
			var co client.Options
			tel.Apply(&co)
			assert.Nil(t, co.MetricsHandler)
			assert.Equal(t, tc.tracing, len(co.Interceptors) == 1)
		})
	}
}

func greet(_ context.Context, name string) (string, error) { return "hello " + name, nil }

func greetFlow(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{ActivityID: "say", StartToCloseTimeout: time.Minute})
	var out string
	err := workflow.ExecuteActivity(ctx, greet, name).Get(ctx, &out)
	return out, err
}

// The SDK's spans carry gateflow's attributes: the flow and run on RunWorkflow, and the step
// on RunActivity, in one trace.
func TestSpansCarryTheFlowRunAndStep(t *testing.T) {
	clearOTelEnv(t)
	t.Setenv("OTEL_SERVICE_NAME", "test-worker")
	exp := tracetest.NewInMemoryExporter()
	tel, err := Setup(context.Background(), Options{SpanExporter: exp, Metrics: true})
	require.NoError(t, err)
	require.NotNil(t, tel.Tracing)
	require.NotNil(t, tel.Metrics)

	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{tel.Tracing}})
	env.RegisterWorkflowWithOptions(greetFlow, workflow.RegisterOptions{Name: "greet"})
	env.RegisterActivity(greet)
	env.ExecuteWorkflow("greet", "ann")
	require.NoError(t, env.GetWorkflowError())
	defer func() { require.NoError(t, tel.Shutdown(context.Background())) }() // it empties exp

	spans := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		spans[s.Name] = s
	}
	wf, ok := spans["RunWorkflow:greet"]
	require.True(t, ok, "spans: %v", names(exp.GetSpans()))
	act, ok := spans["RunActivity:greet"]
	require.True(t, ok, "spans: %v", names(exp.GetSpans()))
	assert.Equal(t, "greet", attr(wf.Attributes, AttrFlow))
	assert.NotEmpty(t, attr(wf.Attributes, AttrRunID))
	assert.Equal(t, "greet", attr(act.Attributes, AttrFlow))
	assert.Equal(t, attr(wf.Attributes, AttrRunID), attr(act.Attributes, AttrRunID))
	assert.Equal(t, "say", attr(act.Attributes, AttrStep))
	assert.Equal(t, wf.SpanContext.TraceID(), act.SpanContext.TraceID(), "one trace")
	svc, _ := wf.Resource.Set().Value("service.name")
	assert.Equal(t, "test-worker", svc.AsString())
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func attr(attrs []attribute.KeyValue, k attribute.Key) string {
	for _, a := range attrs {
		if a.Key == k {
			return a.Value.AsString()
		}
	}
	return ""
}
