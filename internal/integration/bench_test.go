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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

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

// historyOf runs workflowType once and describes its history: events, workflow tasks,
// markers and encoded size, so a half's cost on the server can be compared.
func historyOf(b *testing.B, queue, workflowType string, steps int) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, workflowType, testflows.BenchInput{Steps: steps})
	if err != nil {
		b.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		b.Fatal(err)
	}
	events, tasks, markers, size := 0, 0, 0, 0
	hist := shared.tc.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for hist.HasNext() {
		ev, err := hist.Next()
		if err != nil {
			b.Fatal(err)
		}
		events++
		size += proto.Size(ev)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			tasks++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			markers++
		}
	}
	return fmt.Sprintf("%d events, %d workflow tasks, %d markers, %.1f KB", events, tasks, markers, float64(size)/1024)
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

// benchVariant is one half of the benchmark: its workflow types and its worker.
type benchVariant struct {
	name, steps, hold string
	w                 *benchWorker
	lat               []time.Duration
	busy              time.Duration // the timed rounds' total wall time
	rounds            []benchResult
	history           string // one run's history, described
}

// profile asks the worker to start or stop (writing it) a CPU profile, when
// BENCH_PROFILE_DIR is set.
func (v *benchVariant) profile(b *testing.B, what string, round int) {
	b.Helper()
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	u := "http://" + v.w.heap + "/cpu/" + what + "?file=" + filepath.Join(dir, fmt.Sprintf("%s-%d.cpu", v.name, round))
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %s", u, resp.Status)
	}
}

// BenchmarkGateflowVsRawSDK does the same work as gateflow flows and as raw Temporal SDK
// workflows on the same embedded server in one run, each served by its own worker
// process: N runs of K steps (at most C at a time) for throughput and latency, then M
// runs held after one step for the worker's memory. `make bench` runs it.
//
// The timed runs come in BENCH_ROUNDS rounds (default 4) of N runs per half, the order
// of the halves reversed every other round (raw, Go, definition; then definition, Go,
// raw), so no half always runs first on a fresh server or last on a server still busy
// with the others' work. Each round's figures are printed; a half's row is over all its
// rounds (its p50 and p99 over every run, its runs/s over the rounds' total time).
// BENCH_PROFILE_DIR writes each worker's CPU profile of each round there.
func BenchmarkGateflowVsRawSDK(b *testing.B) {
	n, k, conc, held := envInt("BENCH_RUNS", 200), envInt("BENCH_STEPS", 5), envInt("BENCH_CONCURRENCY", 50), envInt("BENCH_HELD", 1000)
	rounds := envInt("BENCH_ROUNDS", 4)
	bin := filepath.Join(b.TempDir(), "testworker")
	if out, err := exec.Command("go", "build", "-o", bin, "./testworker").CombinedOutput(); err != nil {
		b.Fatalf("build testworker: %v: %s", err, out)
	}
	for i := 0; i < b.N; i++ {
		variants := []*benchVariant{
			{name: "raw", steps: testflows.BenchRawSteps, hold: testflows.BenchRawHold},
			{name: "flow", steps: testflows.BenchFlowSteps, hold: testflows.BenchFlowHold},
			{name: "flowdef", steps: testflows.BenchDefSteps, hold: testflows.BenchDefHold},
		}
		for _, v := range variants {
			v.w = startBenchWorker(b, bin, v.name)
			runMany(b, v.w.queue, v.steps, 20, conc, k) // warm up
			v.history = historyOf(b, v.w.queue, v.steps, k)
		}
		for r := 0; r < rounds; r++ {
			order := slices.Clone(variants)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, v := range order {
				v.profile(b, "start", r)
				lat, total := runMany(b, v.w.queue, v.steps, n, conc, k)
				v.profile(b, "stop", r)
				v.lat = append(v.lat, lat...)
				v.busy += total
				v.rounds = append(v.rounds, benchResult{runsPerSec: float64(n) / total.Seconds(), p50: percentile(lat, 0.50), p99: percentile(lat, 0.99)})
			}
		}
		results := map[string]benchResult{}
		for _, v := range variants {
			r := benchResult{runsPerSec: float64(len(v.lat)) / v.busy.Seconds(), p50: percentile(v.lat, 0.50), p99: percentile(v.lat, 0.99)}
			r.heapPer1000 = holdMany(b, v.w, v.hold, held, conc)
			v.w.stop()
			results[v.name] = r
		}
		printBench(b, variants, results, n, k, conc, held, rounds)
	}
}

// printBench prints the rounds, the table and the ratios, and reports the ratios.
func printBench(b *testing.B, variants []*benchVariant, results map[string]benchResult, n, k, conc, held, rounds int) {
	raw, gf, def := results["raw"], results["flow"], results["flowdef"]
	fmt.Printf("\ngateflow vs the raw Temporal SDK: %d rounds of %d runs x %d steps (%d at a time), %d held runs; one embedded server, one worker process each\n", rounds, n, k, conc, held)
	for _, v := range variants {
		fmt.Printf("%-10s one run: %s\n%-10s rounds:", v.name, v.history, "")
		for _, r := range v.rounds {
			fmt.Printf("  %.1f/s p50 %s", r.runsPerSec, r.p50.Round(time.Millisecond))
		}
		fmt.Println()
	}
	fmt.Println(roundRatios("gateflow / raw", variants[1], variants[0]))
	fmt.Println(roundRatios("definition / Go", variants[2], variants[1]))
	fmt.Printf("\n%-16s %10s %10s %10s %22s\n", "", "runs/s", "p50", "p99", "heap per 1,000 held")
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

// roundRatios describes a/b round by round: the throughput and p50 ratios of each round
// and their medians, the spread behind the overall row.
func roundRatios(name string, a, b *benchVariant) string {
	var tp, p50 []float64
	for i := range min(len(a.rounds), len(b.rounds)) {
		tp = append(tp, a.rounds[i].runsPerSec/b.rounds[i].runsPerSec)
		p50 = append(p50, float64(a.rounds[i].p50)/float64(b.rounds[i].p50))
	}
	line := func(what string, r []float64) string {
		var out strings.Builder
		fmt.Fprintf(&out, "  %s", what)
		for _, x := range r {
			fmt.Fprintf(&out, " %.2fx", x)
		}
		s := slices.Sorted(slices.Values(r))
		fmt.Fprintf(&out, " (median %.2fx)", (s[(len(s)-1)/2]+s[len(s)/2])/2)
		return out.String()
	}
	if len(tp) == 0 {
		return name + ": no rounds"
	}
	return fmt.Sprintf("%-16s by round:%s;%s", name, line("runs/s", tp), line("p50", p50))
}
