package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/telemetry"
	"github.com/gateflow/gateflow/runs"
)

func spanAttr(s tracetest.SpanStub, k attribute.Key) string {
	for _, a := range s.Attributes {
		if a.Key == k {
			return a.Value.AsString()
		}
	}
	return ""
}

// A run started through a traced client on a traced worker is one trace: the client's
// StartWorkflow span, the run's RunWorkflow span under it, and a StartActivity and
// RunActivity span per step, the run and step spans with gateflow's attributes.
func TestTracingARunAndItsSteps(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{SpanExporter: exp})
	require.NoError(t, err)
	defer func() { _ = tel.Shutdown(context.Background()) }() // it empties exp: read the spans before
	require.NotNil(t, tel.Tracing)
	co := client.Options{HostPort: shared.srv.FrontendAddress(), Namespace: shared.srv.Namespace(), Logger: logging.NewSDKLogger(nil, "off")}
	tel.Apply(&co)
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc, err := client.DialContext(dctx, co)
	require.NoError(t, err)
	defer tc.Close()
	queue := fmt.Sprintf("tracing-%d", time.Now().UnixNano())
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue}, examples.All()...)
	require.NoError(t, w.Start())
	defer w.Stop()

	c := flowclient.New(tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, time.Minute)
	run, err := c.Start(ctx, examples.Hello.Name(), examples.HelloInput{Name: "trace"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	byName := map[string][]tracetest.SpanStub{}
	var wf tracetest.SpanStub
	require.Eventually(t, func() bool {
		byName = map[string][]tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			byName[s.Name] = append(byName[s.Name], s)
		}
		for _, s := range byName["RunWorkflow:hello"] {
			if spanAttr(s, telemetry.AttrRunID) == run.ID {
				wf = s
				return true
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond, "the run's span is exported")
	assert.Equal(t, "hello", spanAttr(wf, telemetry.AttrFlow))
	assert.Equal(t, trace.SpanKindServer, wf.SpanKind)

	starts := byName["StartWorkflow:hello"]
	require.NotEmpty(t, starts, "the client's span: %v", spanNames(byName))
	assert.Equal(t, starts[0].SpanContext.SpanID(), wf.Parent.SpanID(), "the run's span is the start's child")
	assert.Equal(t, starts[0].SpanContext.TraceID(), wf.SpanContext.TraceID())

	steps := map[string]tracetest.SpanStub{}
	for name, list := range byName {
		if !strings.HasPrefix(name, "RunActivity:") {
			continue
		}
		for _, s := range list {
			if spanAttr(s, telemetry.AttrRunID) == run.ID {
				steps[spanAttr(s, telemetry.AttrStep)] = s
			}
		}
	}
	for _, step := range []string{"greet", "shout"} {
		s, ok := steps[step]
		if !assert.True(t, ok, "step %s has a span: %v", step, spanNames(byName)) {
			continue
		}
		assert.Equal(t, wf.SpanContext.TraceID(), s.SpanContext.TraceID(), "step %s is in the run's trace", step)
		assert.Equal(t, "hello", spanAttr(s, telemetry.AttrFlow))
		assert.False(t, s.EndTime.Before(s.StartTime))
	}
	scheduled := 0
	for name, list := range byName {
		if strings.HasPrefix(name, "StartActivity:") {
			for _, s := range list {
				if s.Parent.SpanID() == wf.SpanContext.SpanID() {
					scheduled++
				}
			}
		}
	}
	assert.GreaterOrEqual(t, scheduled, 2, "the run schedules each step under its span")
}

func spanNames(m map[string][]tracetest.SpanStub) []string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	return out
}
