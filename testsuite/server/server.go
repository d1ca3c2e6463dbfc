// Package server starts a real Temporal server (embedded, in memory) and a gateflow worker
// for integration tests, and hands back clients. It links the Temporal server, so keep it
// to the test packages that need a server.
//
//	func TestMain(m *testing.M) {
//		srv, err := server.New(server.Options{}, myflows.All()...)
//		...
//		code := m.Run()
//		srv.Stop()
//		os.Exit(code)
//	}
package server

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/testsuite"
)

// Options configure a test server.
type Options struct {
	// Worker are the worker's options (task queue, providers, directory, caps, quotas).
	// The task queue defaults to "gateflow-test".
	Worker flow.WorkerOptions
	// Activities are custom activities to register, by name (empty: the function's).
	Activities map[string]any
	// UIPort serves the Web UI on that port too (0: no UI).
	UIPort int
	// LogLevel shows the server's and the SDK's logs at that level ("": quiet).
	LogLevel string
}

// Server is a running embedded Temporal server with a gateflow worker.
type Server struct {
	dev *devserver.Server
	w   *flow.Worker
	// Temporal is a Temporal client of the server.
	Temporal client.Client
	// Client is a gateflow client on the worker's task queue.
	Client *flowclient.Client
	// TaskQueue is the worker's task queue.
	TaskQueue string
}

// New starts a server and a worker serving flows. Stop them with Stop.
func New(opts Options, flows ...flow.Definition) (*Server, error) {
	dev, err := devserver.Start(devserver.Options{UIPort: opts.UIPort, LogLevel: opts.LogLevel})
	if err != nil {
		return nil, err
	}
	level := opts.LogLevel
	if level == "" {
		level = "off"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tc, err := client.DialContext(ctx, client.Options{HostPort: dev.FrontendAddress(), Namespace: dev.Namespace(),
		Logger: logging.NewSDKLogger(os.Stderr, level)})
	if err != nil {
		_ = dev.Stop()
		return nil, fmt.Errorf("dial the test server: %w", err)
	}
	wo := opts.Worker
	if wo.TaskQueue == "" {
		wo.TaskQueue = "gateflow-test"
	}
	if wo.StopTimeout == 0 {
		wo.StopTimeout = time.Second
	}
	w := flow.NewWorker(tc, wo, flows...)
	for name, fn := range opts.Activities {
		w.RegisterActivity(fn, name)
	}
	if err := w.Start(); err != nil {
		tc.Close()
		_ = dev.Stop()
		return nil, err
	}
	return &Server{dev: dev, w: w, Temporal: tc, TaskQueue: wo.TaskQueue,
		Client: flowclient.New(tc, flowclient.Options{TaskQueue: wo.TaskQueue, Identity: "test"})}, nil
}

// Start is New for one test: it fails t when the server cannot start and stops it when
// the test ends.
func Start(t testing.TB, opts Options, flows ...flow.Definition) *Server {
	t.Helper()
	s, err := New(opts, flows...)
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Address is the server's frontend host:port.
func (s *Server) Address() string { return s.dev.FrontendAddress() }

// UIURL is the Web UI's address, or "" without a UI.
func (s *Server) UIURL() string { return s.dev.UIURL() }

// RecordHistory writes run's history to path, for replay tests.
func (s *Server) RecordHistory(ctx context.Context, run, path string) error {
	return testsuite.RecordHistory(ctx, s.Temporal, run, path)
}

// Stop stops the worker, the client and the server.
func (s *Server) Stop() {
	s.w.Stop()
	s.Temporal.Close()
	_ = s.dev.Stop()
}
