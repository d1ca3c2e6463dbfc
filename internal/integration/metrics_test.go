package integration

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/metrics"
)

func TestMetricsExposeGateflowSeriesWithLabels(t *testing.T) {
	reg := metrics.NewRegistry()
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc, err := client.DialContext(dctx, client.Options{HostPort: shared.srv.FrontendAddress(), Namespace: shared.srv.Namespace(),
		MetricsHandler: reg.Handler(), Logger: logging.NewSDKLogger(nil, "off")})
	require.NoError(t, err)
	defer tc.Close()
	queue := "metrics"
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue}, append(examples.All(), testflows.All()...)...)
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(tc, flowclient.Options{TaskQueue: queue})
	ctx := ctxT(t, time.Minute)

	run, err := c.Start(ctx, "hello", nil, flow.StartOptions{})
	require.NoError(t, err)
	_, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	gate, err := c.Start(ctx, "test.earlygate", nil, flow.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, gate.ID, "gate open", waitingFor("approval:gate"))

	var out bytes.Buffer
	require.Eventually(t, func() bool {
		out.Reset()
		require.NoError(t, reg.Write(&out))
		return bytes.Contains(out.Bytes(), []byte(`gateflow_pending_gates{workflow="test.earlygate"} 1`))
	}, 10*time.Second, 100*time.Millisecond, "%s", out.String())
	text := out.String()
	assert.Regexp(t, `(?m)^gateflow_runs_total\{[^}]*status="completed"[^}]*workflow="hello"[^}]*\} 1$`, text)
	assert.Regexp(t, `(?m)^gateflow_step_duration_seconds_count\{[^}]*kind="shell"[^}]*status="completed"[^}]*workflow="hello"[^}]*\} 2$`, text)
	assert.Regexp(t, `(?m)^gateflow_run_cost_usd_micros_total\{[^}]*workflow="hello"[^}]*\} 0$`, text)
	assert.Regexp(t, `(?m)^temporal_workflow_completed\{[^}]*workflow_type="hello"[^}]*\} 1$`, text, "the SDK's own metrics are there too")

	_, err = c.Vote(ctx, gate.ID, approval.Vote{Gate: "gate", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	_, err = c.Wait(ctx, gate.ID)
	require.NoError(t, err)
	out.Reset()
	require.NoError(t, reg.Write(&out))
	assert.Contains(t, out.String(), `gateflow_pending_gates{workflow="test.earlygate"} 0`)
	assert.Regexp(t, `(?m)^gateflow_gates_decided_total\{[^}]*outcome="approved"[^}]*workflow="test.earlygate"[^}]*\} 1$`, out.String())
}
