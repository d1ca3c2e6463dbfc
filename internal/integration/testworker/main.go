// Command testworker serves the integration tests' flows on a task queue, so a test can
// kill a worker process in the middle of a step.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/logging"
)

func main() {
	address := flag.String("address", "", "Temporal frontend")
	queue := flag.String("task-queue", "", "task queue")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	tc, err := client.DialContext(ctx, client.Options{HostPort: *address, Logger: logging.NewSDKLogger(os.Stderr, "error")})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: *queue}, testflows.All()...)
	w.RegisterActivity(testflows.Count, "")
	if err := w.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	w.Stop()
}
