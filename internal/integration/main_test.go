package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/logging"
)

// shared is the server, client and worker most tests use; tests that need their own
// server (lifecycle, persistence) start one.
var shared struct {
	srv    *devserver.Server
	tc     client.Client
	client *flowclient.Client
	queue  string
	llm    *llmFakes
}

func TestMain(m *testing.M) {
	code := runMain(m)
	if builtBins.dir != "" {
		_ = os.RemoveAll(builtBins.dir)
	}
	os.Exit(code)
}

func runMain(m *testing.M) int {
	srv, err := devserver.Start(devserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start dev server:", err)
		return 1
	}
	defer srv.Stop()
	tc, err := dial(srv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 1
	}
	defer tc.Close()
	shared.srv, shared.tc, shared.queue = srv, tc, "integration"
	fakes := startLLMFakes()
	defer fakes.close()
	shared.llm = fakes
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: shared.queue, StopTimeout: 5 * time.Second, Providers: fakes.providers(),
		Directory: examples.Directory()},
		append(examples.All(), testflows.All()...)...)
	w.RegisterActivity(testflows.Count, "")
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start worker:", err)
		return 1
	}
	defer w.Stop()
	shared.client = flowclient.New(tc, flowclient.Options{TaskQueue: shared.queue, Identity: "tester"})
	return m.Run()
}

func dial(srv *devserver.Server) (client.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.DialContext(ctx, client.Options{
		HostPort:  srv.FrontendAddress(),
		Namespace: srv.Namespace(),
		Logger:    logging.NewSDKLogger(os.Stderr, "error"),
	})
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
