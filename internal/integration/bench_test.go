package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// benchWorker is one half of the benchmark served by a testworker process.
type benchWorker struct {
	cmd   *exec.Cmd
	queue string
	heap  string
}

func startBenchWorker(b *testing.B, bin, variant string) *benchWorker {
	b.Helper()
	queue := "bench-" + variant
	cmd := exec.Command(bin, "--address", shared.srv.FrontendAddress(), "--task-queue", queue, "--bench", variant)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := &benchWorker{cmd: cmd, queue: queue}
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("bench worker %s: %v", variant, err)
		}
		line = strings.TrimSpace(line)
		if addr, ok := strings.CutPrefix(line, "heap "); ok {
			w.heap = addr
		}
		if line == "ready" {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return w
		}
	}
}

func (w *benchWorker) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	_ = w.cmd.Wait()
}

// heapAndMarks reads the worker's heap in use (after a GC) and its Mark count.
func (w *benchWorker) heapAndMarks(b *testing.B) (uint64, int64) {
	b.Helper()
	resp, err := http.Get("http://" + w.heap + "/heap")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var heap uint64
	var marks int64
	if _, err := fmt.Fscan(resp.Body, &heap, &marks); err != nil {
		b.Fatal(err)
	}
	return heap, marks
}

type benchResult struct {
	runsPerSec  float64
	p50, p99    time.Duration
	heapPer1000 float64 // bytes
}

// runMany starts n runs of workflowType (at most conc at a time) and returns each run's
// latency from the start call to its result.
func runMany(b *testing.B, queue, workflowType string, n, conc, steps int) ([]time.Duration, time.Duration) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	lat := make([]time.Duration, n)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	begin := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			run, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, workflowType, testflows.BenchInput{Steps: steps})
			if err == nil {
				var sum int
				err = run.Get(ctx, &sum)
			}
			lat[i] = time.Since(t0)
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatalf("%s: %v", workflowType, firstErr)
	}
	return lat, time.Since(begin)
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// holdMany starts n runs that take one step and then sleep, and returns the worker's heap
// growth per 1,000 such runs.
func holdMany(b *testing.B, w *benchWorker, workflowType string, n, conc int) float64 {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	before, marks0 := w.heapAndMarks(b)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: w.queue}, workflowType, testflows.BenchInput{}); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		_, marks := w.heapAndMarks(b)
		if marks-marks0 >= int64(n) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: only %d of %d runs started their step", workflowType, marks-marks0, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // the workflow tasks after the step (the timers) finish
	after, _ := w.heapAndMarks(b)
	return (float64(after) - float64(before)) * 1000 / float64(n)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkGateflowVsRawSDK does the same work as gateflow flows and as raw Temporal SDK
// workflows on the same embedded server in one run, each served by its own worker
// process: N runs of K steps (at most C at a time) for throughput and latency, then M
// runs held after one step for the worker's memory. `make bench` runs it.
func BenchmarkGateflowVsRawSDK(b *testing.B) {
	n, k, conc, held := envInt("BENCH_RUNS", 200), envInt("BENCH_STEPS", 5), envInt("BENCH_CONCURRENCY", 50), envInt("BENCH_HELD", 1000)
	bin := filepath.Join(b.TempDir(), "testworker")
	if out, err := exec.Command("go", "build", "-o", bin, "./testworker").CombinedOutput(); err != nil {
		b.Fatalf("build testworker: %v: %s", err, out)
	}
	variants := []struct{ name, steps, hold string }{
		{"raw", testflows.BenchRawSteps, testflows.BenchRawHold},
		{"flow", testflows.BenchFlowSteps, testflows.BenchFlowHold},
		{"flowdef", testflows.BenchDefSteps, testflows.BenchDefHold},
	}
	results := map[string]benchResult{}
	for i := 0; i < b.N; i++ {
		for _, v := range variants {
			w := startBenchWorker(b, bin, v.name)
			runMany(b, w.queue, v.steps, 20, conc, k) // warm up
			lat, total := runMany(b, w.queue, v.steps, n, conc, k)
			r := benchResult{runsPerSec: float64(n) / total.Seconds(), p50: percentile(lat, 0.50), p99: percentile(lat, 0.99)}
			r.heapPer1000 = holdMany(b, w, v.hold, held, conc)
			w.stop()
			results[v.name] = r
		}
	}
	raw, gf, def := results["raw"], results["flow"], results["flowdef"]
	fmt.Printf("\ngateflow vs the raw Temporal SDK: %d runs x %d steps (%d at a time), %d held runs; one embedded server, one worker process each\n", n, k, conc, held)
	fmt.Printf("%-16s %10s %10s %10s %22s\n", "", "runs/s", "p50", "p99", "heap per 1,000 held")
	for _, row := range []struct {
		name string
		r    benchResult
	}{{"raw SDK", raw}, {"gateflow", gf}, {"definition", def}} {
		fmt.Printf("%-16s %10.1f %10s %10s %19.1f MB\n", row.name, row.r.runsPerSec, row.r.p50.Round(time.Millisecond), row.r.p99.Round(time.Millisecond), row.r.heapPer1000/1e6)
	}
	fmt.Printf("%-16s %9.2fx %9.2fx %9.2fx %21.2fx\n\n", "gateflow / raw", gf.runsPerSec/raw.runsPerSec,
		float64(gf.p50)/float64(raw.p50), float64(gf.p99)/float64(raw.p99), gf.heapPer1000/raw.heapPer1000)
	// A definition doing the same steps, against the Go flow (target: at most 1.10x).
	fmt.Printf("%-16s %9.2fx %9.2fx %9.2fx %21.2fx\n\n", "definition / Go", def.runsPerSec/gf.runsPerSec,
		float64(def.p50)/float64(gf.p50), float64(def.p99)/float64(gf.p99), def.heapPer1000/gf.heapPer1000)
	b.ReportMetric(def.runsPerSec/gf.runsPerSec, "def-throughput-ratio")
	b.ReportMetric(float64(def.p50)/float64(gf.p50), "def-p50-ratio")
	b.ReportMetric(gf.runsPerSec/raw.runsPerSec, "throughput-ratio")
	b.ReportMetric(float64(gf.p50)/float64(raw.p50), "p50-ratio")
	b.ReportMetric(float64(gf.p99)/float64(raw.p99), "p99-ratio")
	b.ReportMetric(gf.heapPer1000/raw.heapPer1000, "heap-ratio")
}
