// Command benchworker serves one side of the benchmark (BenchmarkGateflowVsRawSDK) on a
// task queue: the gateflow flows or the raw Temporal SDK workflows doing the same work.
// It prints "stats ADDR" and "ready"; GET http://ADDR/stats answers, after a GC, the
// heap in use, the goroutine stacks in use (bytes), the number of goroutines, how many
// held runs have taken their first step and the CPU time the process used (ns, before
// that GC). With --replay it serves nothing: it replays a
// recorded history --replays times and prints the allocations and bytes per replay.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/internal/logging"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// options are the command's flags.
type options struct {
	address, queue, side, replay, id, memprofile string
	// openAIURL is the local provider of the agent loop variant.
	openAIURL               string
	sink                    bool
	replays, memProfileRate int
}

func main() {
	var o options
	flag.StringVar(&o.address, "address", "", "Temporal frontend")
	flag.StringVar(&o.queue, "task-queue", "", "task queue")
	flag.StringVar(&o.side, "side", "", `"raw" (the raw SDK workflows) or "flow" (the gateflow flows and definitions)`)
	flag.StringVar(&o.openAIURL, "openai-url", "", "the agent loop variant's provider: a local server speaking the OpenAI wire format (base URL)")
	flag.BoolVar(&o.sink, "sink", false, "flow side: deliver every run's events to a log sink that drops them")
	flag.StringVar(&o.replay, "replay", "", "replay this recorded history (JSON) instead of serving")
	flag.IntVar(&o.replays, "replays", 5, "with --replay: how many replays to measure")
	flag.StringVar(&o.id, "workflow-id", "", "with --replay: the recorded run's workflow ID")
	flag.StringVar(&o.memprofile, "memprofile", "", "with --replay: write an allocation profile of the measured replays to this file")
	flag.IntVar(&o.memProfileRate, "mem-profile-rate", 0, "set runtime.MemProfileRate (finer heap profiles on /heap); 0 keeps the default")
	flag.Parse()
	if o.memProfileRate > 0 {
		runtime.MemProfileRate = o.memProfileRate
	}
	var err error
	if o.replay != "" {
		err = replayHistory(o)
	} else {
		err = serve(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchworker:", err)
		os.Exit(1)
	}
}

// serve runs a worker of o.side on o.queue until SIGTERM or SIGINT.
func serve(o options) error {
	if o.address == "" || o.queue == "" {
		return errors.New("--address and --task-queue are required")
	}
	queue, side := o.queue, o.side
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tc, err := client.DialContext(ctx, client.Options{HostPort: o.address, Logger: logging.NewSDKLogger(os.Stderr, "error")})
	if err != nil {
		return fmt.Errorf("dial %s: %w", o.address, err)
	}
	defer tc.Close()
	var stop func()
	switch side {
	case "raw":
		w := worker.New(tc, queue, worker.Options{})
		registerRaw(w)
		w.RegisterActivityWithOptions(testflows.Echo, activity.RegisterOptions{Name: testflows.BenchEcho})
		w.RegisterActivityWithOptions(testflows.Mark, activity.RegisterOptions{Name: testflows.BenchMark})
		w.RegisterActivityWithOptions(testflows.RawShellStep, activity.RegisterOptions{Name: testflows.BenchShellActivity})
		if p := testflows.BenchAgentProviders(o.openAIURL); p != nil {
			w.RegisterActivityWithOptions(testflows.RawTurns{Provider: p[llm.ProviderOpenAI]}.Turn, activity.RegisterOptions{Name: testflows.BenchTurnActivity})
		}
		w.RegisterActivity(testflows.BenchLookup)
		stop, err = w.Stop, w.Start()
	case "flow":
		flows, ferr := flowSide()
		if ferr != nil {
			return ferr
		}
		opts := flow.WorkerOptions{TaskQueue: queue, Providers: testflows.BenchAgentProviders(o.openAIURL)}
		if o.sink {
			opts.EventSinks = []events.Sink{events.Log{Logger: logging.NewSDKLogger(io.Discard, "error")}}
		}
		w := flow.NewWorker(tc, opts, flows...)
		w.RegisterActivity(testflows.Echo, testflows.BenchEcho)
		w.RegisterActivity(testflows.Mark, testflows.BenchMark)
		w.RegisterActivity(testflows.EchoWith, testflows.BenchEchoWith)
		w.RegisterActivity(testflows.MarkWith, testflows.BenchMarkWith)
		w.RegisterActivity(testflows.BenchLookup, "")
		stop, err = w.Stop, w.Start()
	default:
		return fmt.Errorf("--side %q: want raw or flow", side)
	}
	if err != nil {
		return fmt.Errorf("start the %s worker: %w", side, err)
	}
	addr, err := serveStats()
	if err != nil {
		stop()
		return err
	}
	defer stop()
	done, unwatch := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer unwatch()
	fmt.Printf("stats %s\nready\n", addr)
	<-done.Done()
	return nil
}

// flowSide is every gateflow flow of the benchmark: Go flows and definitions.
func flowSide() ([]flow.Definition, error) {
	defs, err := testflows.BenchDefFlows()
	if err != nil {
		return nil, fmt.Errorf("bench definitions: %w", err)
	}
	return slices.Concat(testflows.BenchFlows(), testflows.BenchMoreFlows(), testflows.BenchAgentFlows(), defs), nil
}

// registerRaw registers the raw SDK side's workflows on r.
func registerRaw(r worker.WorkflowRegistry) {
	for name, wf := range map[string]any{
		testflows.BenchRawSteps: testflows.RawSteps, testflows.BenchRawHold: testflows.RawHold,
		testflows.BenchRawShell: testflows.RawShell, testflows.BenchRawApprove: testflows.RawApprove,
		testflows.BenchRawAgent: testflows.RawAgent,
	} {
		r.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: name})
	}
}

// serveStats serves GET /stats, and /cpu/start?file=F and /cpu/stop (a CPU profile of
// what the worker does in between, written to F), on a loopback port and returns its
// address.
func serveStats() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("stats listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		fmt.Fprintf(w, "%d %d %d %d %d\n", m.HeapInuse, m.StackInuse, runtime.NumGoroutine(), testflows.Marked.Load(), cpu.Nanoseconds())
	})
	var prof cpuProfile
	mux.HandleFunc("/cpu/start", prof.start)
	mux.HandleFunc("/cpu/stop", prof.stop)
	mux.HandleFunc("/heap", func(w http.ResponseWriter, r *http.Request) {
		runtime.GC()
		if err := writeProfile("heap", r.URL.Query().Get("file")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	go func() { _ = http.Serve(l, mux) }()
	return l.Addr().String(), nil
}

// replayHistory replays the history in o.replay o.replays times (after one replay that
// warms caches) and prints "allocs A bytes B": the allocations and bytes allocated per
// replay; with o.memprofile it also writes their allocation profile.
func replayHistory(o options) error {
	side, file, id, n := o.side, o.replay, o.id, o.replays
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	h, err := client.HistoryFromJSON(bytes.NewReader(b), client.HistoryJSONOptions{})
	if err != nil {
		return fmt.Errorf("replay %s: %w", file, err)
	}
	r := worker.NewWorkflowReplayer()
	switch side {
	case "raw":
		registerRaw(r)
	case "flow":
		flows, err := flowSide()
		if err != nil {
			return err
		}
		if err := flow.RegisterWorkflows(r, flow.WorkerOptions{}, flows...); err != nil {
			return fmt.Errorf("register the flows: %w", err)
		}
	default:
		return fmt.Errorf("--side %q: want raw or flow", side)
	}
	if len(h.GetEvents()) == 0 {
		return fmt.Errorf("replay %s: no events", file)
	}
	opts := worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id,
		RunID: h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetOriginalExecutionRunId()}}
	logger := logging.NewSDKLogger(io.Discard, "error")
	once := func() error { return r.ReplayWorkflowHistoryWithOptions(logger, h, opts) }
	if err := once(); err != nil {
		return fmt.Errorf("replay %s: %w", file, err)
	}
	if o.memprofile != "" {
		runtime.MemProfileRate = 1 // every allocation; the counts below do not depend on it
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for range n {
		if err := once(); err != nil {
			return fmt.Errorf("replay %s: %w", file, err)
		}
	}
	runtime.ReadMemStats(&m1)
	fmt.Printf("allocs %d bytes %d\n", (m1.Mallocs-m0.Mallocs)/uint64(n), (m1.TotalAlloc-m0.TotalAlloc)/uint64(n))
	if o.memprofile != "" {
		runtime.GC() // the profile is as of the last GC
		return writeProfile("allocs", o.memprofile)
	}
	return nil
}
