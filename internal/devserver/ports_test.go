package devserver

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/log"
)

// TestStartPicksNewPortsWhenOneIsTakenMeanwhile: a port the dev server picked is taken by
// another process before the server binds it. The server's Fatal report becomes an error
// and Start tries again on new ports, instead of exiting the process (Temporal's logger)
// or serving on a nil listener (a no-op logger).
func TestStartPicksNewPortsWhenOneIsTakenMeanwhile(t *testing.T) {
	taken, err := net.Listen("tcp", host+":0")
	require.NoError(t, err)
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	var mu sync.Mutex
	var picked []int
	calls := 0
	freePort = func() (int, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		p := takenPort // the history port of the first try
		if calls != 2 {
			var err error
			if p, err = FreePort(); err != nil {
				return 0, err
			}
		}
		picked = append(picked, p)
		return p, nil
	}
	defer func() { freePort = FreePort }()

	s, err := Start(Options{})
	require.NoError(t, err)
	defer func() { _ = s.Stop() }()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("picked %v (taken %d)", picked, takenPort)
	assert.GreaterOrEqual(t, calls, 8, "two sets of four ports were picked: %v", picked)
	assert.NotEqual(t, fmt.Sprintf("%s:%d", host, takenPort), s.FrontendAddress())
	// Every service works: a start reaches history and matching.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: s.FrontendAddress(), Logger: quietSDKLogger{}})
	require.NoError(t, err)
	defer c.Close()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "ports", TaskQueue: "ports"}, "nobody-serves-this")
	require.NoError(t, err, "the server on its second set of ports starts a workflow")
	d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	assert.Equal(t, "nobody-serves-this", d.GetWorkflowExecutionInfo().GetType().GetName())
}

func TestFatalLoggerRaisesABindError(t *testing.T) {
	_, err := startServer(nil) // no config: the server's constructor fails
	require.Error(t, err)
	assert.NotErrorIs(t, err, errPortTaken)
	assert.PanicsWithError(t, "devserver: Failed to start gRPC listener", func() {
		fatalLogger{Logger: log.NewNoopLogger()}.Fatal("Failed to start gRPC listener")
	})
}
