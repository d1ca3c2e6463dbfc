// Command testworker serves the integration tests' flows on a task queue, so a test can
// kill a worker process in the middle of a step.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/logging"
)

func main() {
	address := flag.String("address", "", "Temporal frontend")
	queue := flag.String("task-queue", "", "task queue")
	bench := flag.String("bench", "", `serve one half of the benchmark: "raw", "flow" or "flowdef"; prints the address of a /heap endpoint`)
	services := flag.Bool("services", false, "serve the service tests' flows (testflows.ServiceFlows) with their services")
	blobURL := flag.String("artifacts", "", "serve the artifact tests' flows (testflows.ArtifactFlows) with this blob store")
	identity := flag.String("identity", "", "the worker's identity (default: the SDK's)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	tc, err := client.DialContext(ctx, client.Options{HostPort: *address, Logger: logging.NewSDKLogger(os.Stderr, "error")})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mode := *bench
	if *services {
		mode = "services"
	}
	var stop func()
	if *blobURL != "" {
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: *queue, Identity: *identity, BlobURL: *blobURL}, testflows.ArtifactFlows()...)
		stop, err = w.Stop, w.Start()
	} else {
		stop, err = serve(tc, *queue, mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *bench != "" {
		addr, err := serveHeap()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("heap " + addr)
	}
	fmt.Println("ready")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	stop()
}

// serve starts the test flows, or one half of the benchmark.
func serve(tc client.Client, queue, bench string) (func(), error) {
	switch bench {
	case "":
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, Quotas: quotas(),
			Providers: map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(testflows.BudgetRules()...)}}, testflows.All()...)
		w.RegisterActivity(testflows.Count, "")
		return w.Stop, w.Start()
	case "flow":
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue}, testflows.BenchFlows()...)
		w.RegisterActivity(testflows.Echo, testflows.BenchEcho)
		w.RegisterActivity(testflows.Mark, testflows.BenchMark)
		return w.Stop, w.Start()
	case "flowdef":
		defs, err := testflows.BenchDefFlows()
		if err != nil {
			return nil, err
		}
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue}, defs...)
		w.RegisterActivity(testflows.EchoWith, testflows.BenchEchoWith)
		w.RegisterActivity(testflows.MarkWith, testflows.BenchMarkWith)
		return w.Stop, w.Start()
	case "services":
		w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, Services: testflows.Services()}, testflows.ServiceFlows()...)
		return w.Stop, w.Start()
	case "raw":
		w := worker.New(tc, queue, worker.Options{})
		w.RegisterWorkflowWithOptions(testflows.RawSteps, workflow.RegisterOptions{Name: testflows.BenchRawSteps})
		w.RegisterWorkflowWithOptions(testflows.RawHold, workflow.RegisterOptions{Name: testflows.BenchRawHold})
		w.RegisterActivityWithOptions(testflows.Echo, activity.RegisterOptions{Name: testflows.BenchEcho})
		w.RegisterActivityWithOptions(testflows.Mark, activity.RegisterOptions{Name: testflows.BenchMark})
		return w.Stop, w.Start()
	}
	return nil, fmt.Errorf("--bench %q: want raw, flow or flowdef", bench)
}

// quotas are the monthly quotas the crash test's worker enforces.
func quotas() budget.Quotas {
	q := decimal.RequireFromString("100")
	return budget.Quotas{MonthlyUSD: &q}
}

// cpuProfile is the CPU profile GET /cpu/start?file=F starts and /cpu/stop writes to F.
type cpuProfile struct {
	mu sync.Mutex
	f  *os.File
}

func (p *cpuProfile) start(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f != nil {
		http.Error(w, "a CPU profile is already running", http.StatusConflict)
		return
	}
	f, err := os.Create(r.URL.Query().Get("file"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p.f = f
}

func (p *cpuProfile) stop(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil {
		http.Error(w, "no CPU profile is running", http.StatusConflict)
		return
	}
	pprof.StopCPUProfile()
	if err := p.f.Close(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
	p.f = nil
}

// serveHeap serves GET /heap: after a GC, the heap in use (bytes) and the Mark count; and
// /cpu/start?file=F and /cpu/stop, a CPU profile of what the worker does in between.
func serveHeap() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/heap", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Fprintf(w, "%d %d\n", m.HeapInuse, testflows.Marked.Load())
	})
	var prof cpuProfile
	mux.HandleFunc("/cpu/start", prof.start)
	mux.HandleFunc("/cpu/stop", prof.stop)
	go func() { _ = http.Serve(l, mux) }()
	return l.Addr().String(), nil
}
