package integration

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/devserver"
)

func freePort(t *testing.T) int {
	t.Helper()
	p, err := devserver.FreePort()
	require.NoError(t, err)
	return p
}

func assertPortFree(t *testing.T, port int) {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	require.NoError(t, err, "port %d is still in use after Stop", port)
	require.NoError(t, l.Close())
}

// startWorker runs the example flows on srv and returns a client for them and a stop
// function (also run when the test ends; stop workers before their server).
func startWorker(t *testing.T, srv *devserver.Server) (*flowclient.Client, func()) {
	t.Helper()
	tc, err := dial(srv)
	require.NoError(t, err)
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: "gateflow", StopTimeout: time.Second}, examples.All()...)
	require.NoError(t, w.Start())
	var once sync.Once
	stop := func() { once.Do(func() { w.Stop(); tc.Close() }) }
	t.Cleanup(stop)
	return flowclient.New(tc, flowclient.Options{Identity: "tester"}), stop
}

func TestDevServerRunsAFlowStopsAndKeepsRunsInItsDBFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gateflow.db")
	port, uiPort := freePort(t), freePort(t)
	srv, err := devserver.Start(devserver.Options{Port: port, UIPort: uiPort, DBFile: db})
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("127.0.0.1:%d", port), srv.FrontendAddress())
	assert.Equal(t, fmt.Sprintf("http://127.0.0.1:%d", uiPort), srv.UIURL())

	resp, err := http.Get(srv.UIURL() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the Web UI answers")

	ctx := ctxT(t, 2*time.Minute)
	c, stopWorker := startWorker(t, srv)
	run, err := c.Start(ctx, "hello", examples.HelloInput{Name: "disk"}, core.StartOptions{ID: "persisted-hello"})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status)

	stopWorker()
	require.NoError(t, srv.Stop())
	require.NoError(t, srv.Stop(), "Stop twice is fine")
	assertPortFree(t, port)
	assertPortFree(t, uiPort)

	// Same file, same ports, no worker: the completed run, its steps and result are there.
	srv2, err := devserver.Start(devserver.Options{Port: port, UIPort: uiPort, DBFile: db})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv2.Stop() })
	tc, err := dial(srv2)
	require.NoError(t, err)
	defer tc.Close()
	c2 := flowclient.New(tc, flowclient.Options{})
	d2, err := c2.Describe(ctx, "persisted-hello")
	require.NoError(t, err)
	assert.Equal(t, runs.StatusCompleted, d2.Status)
	assert.Equal(t, d.RunID, d2.RunID)
	require.NotNil(t, d2.State, "the final state is kept in the run's memo")
	require.Len(t, d2.State.Steps, 2)
	assert.Equal(t, "shout", d2.State.Steps[1].Name)
	assert.JSONEq(t, `{"greeting":"Hello, disk!","shouted":"HELLO, DISK!"}`, string(d2.Result))

	found, err := c2.List(ctx, flowclient.ListOptions{})
	require.NoError(t, err)
	require.Len(t, found, 1, "search attributes survive the restart")
	assert.Equal(t, "persisted-hello", found[0].ID)
}

func TestTwoDevServersSideBySide(t *testing.T) {
	a, err := devserver.Start(devserver.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Stop() })
	b, err := devserver.Start(devserver.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Stop() })
	require.NotEqual(t, a.FrontendAddress(), b.FrontendAddress())

	ctx := ctxT(t, 2*time.Minute)
	ca, stopA := startWorker(t, a)
	cb, stopB := startWorker(t, b)
	t.Cleanup(func() { stopA(); stopB() }) // before the servers' own cleanups
	ra, err := ca.Start(ctx, "hello", examples.HelloInput{Name: "a"}, core.StartOptions{ID: "side-a"})
	require.NoError(t, err)
	rb, err := cb.Start(ctx, "hello", examples.HelloInput{Name: "b"}, core.StartOptions{ID: "side-b"})
	require.NoError(t, err)
	da, err := ca.Wait(ctx, ra.ID)
	require.NoError(t, err)
	db, err := cb.Wait(ctx, rb.ID)
	require.NoError(t, err)
	assert.JSONEq(t, `{"greeting":"Hello, a!","shouted":"HELLO, A!"}`, string(da.Result))
	assert.JSONEq(t, `{"greeting":"Hello, b!","shouted":"HELLO, B!"}`, string(db.Result))

	_, err = ca.Describe(ctx, "side-b")
	var nf *flowclient.RunNotFoundError
	assert.ErrorAs(t, err, &nf, "each server has its own store")
}

func TestDevServerRefusesBadOptions(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port

	_, err = devserver.Start(devserver.Options{Port: busy})
	assert.ErrorContains(t, err, fmt.Sprintf("frontend port: port %d is in use", busy))
	_, err = devserver.Start(devserver.Options{UIPort: busy})
	assert.ErrorContains(t, err, fmt.Sprintf("UI port: port %d is in use", busy))
	_, err = devserver.Start(devserver.Options{DBFile: filepath.Join(t.TempDir(), "missing", "x.db")})
	assert.ErrorContains(t, err, "does not exist")
	_, err = devserver.Start(devserver.Options{LogLevel: "loud"})
	assert.ErrorContains(t, err, `log level "loud"`)
	_, err = devserver.Start(devserver.Options{Port: 70000})
	assert.ErrorContains(t, err, "out of range")
}

// TestDevServerRefusesASecondServerOnItsDBFile: a second server on the same database file
// is refused, naming the first one's process, instead of joining it as a second cluster
// node; once the first stops, the file is free. (Issue 17.)
func TestDevServerRefusesASecondServerOnItsDBFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "gateflow.db")
	a, err := devserver.Start(devserver.Options{DBFile: db})
	require.NoError(t, err)
	_, err = devserver.Start(devserver.Options{DBFile: db})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is in use by another server (process "+strconv.Itoa(os.Getpid())+")")
	require.NoError(t, a.Stop())
	b, err := devserver.Start(devserver.Options{DBFile: db})
	require.NoError(t, err, "the file is free once the first server stopped")
	require.NoError(t, b.Stop())
}
