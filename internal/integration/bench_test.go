package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// benchProc is a benchworker process serving one side of the benchmark on a task queue.
type benchProc struct {
	cmd   *exec.Cmd
	queue string
	stats string // address of its /stats endpoint
}

func startBenchProc(b *testing.B, bin, side, queue string, extra ...string) *benchProc {
	b.Helper()
	cmd := exec.Command(bin, append([]string{"--address", shared.srv.FrontendAddress(), "--task-queue", queue, "--side", side}, extra...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &benchProc{cmd: cmd, queue: queue}
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("benchworker %s on %s: %v", side, queue, err)
		}
		line = strings.TrimSpace(line)
		if addr, ok := strings.CutPrefix(line, "stats "); ok {
			p.stats = addr
		}
		if line == "ready" {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return p
		}
	}
}

func (p *benchProc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// profile asks the process to start or stop (writing it) a CPU profile, when
// BENCH_PROFILE_DIR is set: DIR/NAME.cpu.
func (p *benchProc) profile(b *testing.B, what, name string) {
	b.Helper()
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	p.ask(b, "/cpu/"+what+"?file="+filepath.Join(dir, name+".cpu"))
}

// ask GETs path of the process's stats server and fails the benchmark unless it is OK.
func (p *benchProc) ask(b *testing.B, path string) {
	b.Helper()
	u := "http://" + p.stats + path
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %s", u, resp.Status)
	}
}

// procStats is what a benchworker's /stats says, after a GC.
type procStats struct {
	heap, stack, goroutines, marked, cpu int64
}

func (p *benchProc) read(b *testing.B) procStats {
	b.Helper()
	resp, err := http.Get("http://" + p.stats + "/stats")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var s procStats
	if _, err := fmt.Fscan(resp.Body, &s.heap, &s.stack, &s.goroutines, &s.marked, &s.cpu); err != nil {
		b.Fatalf("stats of %s: %v", p.queue, err)
	}
	return s
}

// benchSpec is how one side runs one variant: its queue, its workflow and its client.
type benchSpec struct {
	side      string // "raw" or "flow", the benchworker side (for replays)
	proc      *benchProc
	queue     string
	workflow  string
	flowStart bool // start through flowclient instead of the raw client
}

// benchRow is one variant of the benchmark, run by both sides.
type benchRow struct {
	name    string
	k, runs int
	gf, raw benchSpec
	replay  bool // measure allocations per replayed run
}

// runOne starts one run of spec and waits for its result.
func runOne(ctx context.Context, fc *flowclient.Client, s benchSpec, k int) (id, runID string, err error) {
	in := testflows.BenchInput{Steps: k}
	if s.flowStart {
		run, err := fc.Start(ctx, s.workflow, in, core.StartOptions{})
		if err != nil {
			return "", "", fmt.Errorf("flowclient start %s: %w", s.workflow, err)
		}
		return run.ID, run.RunID, shared.tc.GetWorkflow(ctx, run.ID, run.RunID).Get(ctx, nil)
	}
	run, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: s.queue}, s.workflow, in)
	if err != nil {
		return "", "", fmt.Errorf("start %s: %w", s.workflow, err)
	}
	return run.GetID(), run.GetRunID(), run.Get(ctx, nil)
}

// parallel calls fn(i) for i < n, at most conc at a time, and returns the first error.
func parallel(n, conc int, fn func(i int) error) error {
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// throughput runs n runs of s (conc at a time): runs per second, the p50 latency (start
// call to result) in seconds and the worker's CPU time per run in seconds.
func throughput(b *testing.B, fc *flowclient.Client, s benchSpec, k, n, conc int) (rps, p50, cpu float64) {
	b.Helper()
	cpu0 := s.proc.read(b).cpu
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	lat := make([]float64, n)
	begin := time.Now()
	err := parallel(n, conc, func(i int) error {
		t0 := time.Now()
		_, _, err := runOne(ctx, fc, s, k)
		lat[i] = time.Since(t0).Seconds()
		return err
	})
	if err != nil {
		b.Fatalf("%s: %v", s.workflow, err)
	}
	rps = float64(n) / time.Since(begin).Seconds()
	return rps, quantile(lat, 0.5), time.Duration(s.proc.read(b).cpu-cpu0).Seconds() / float64(n)
}

func quantile(v []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// recorded is one run's history, counted, and its JSON for a replay.
type recorded struct {
	id           string
	events, size int
	json         []byte
}

// record runs s once and fetches its history.
func record(b *testing.B, fc *flowclient.Client, s benchSpec, k int) recorded {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	id, _, err := runOne(ctx, fc, s, k)
	if err != nil {
		b.Fatalf("%s: %v", s.workflow, err)
	}
	js, err := fc.History(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	h, err := client.HistoryFromJSON(bytes.NewReader(js), client.HistoryJSONOptions{})
	if err != nil {
		b.Fatal(err)
	}
	r := recorded{id: id, json: js, events: len(h.GetEvents())}
	for _, ev := range h.GetEvents() {
		r.size += ev.Size()
	}
	return r
}

// replayAllocs replays r in a fresh benchworker process: allocations and bytes per replay.
func replayAllocs(b *testing.B, bin, side string, r recorded) (allocs, bytes float64) {
	b.Helper()
	f := filepath.Join(b.TempDir(), r.id+".json")
	if err := os.WriteFile(f, r.json, 0o600); err != nil {
		b.Fatal(err)
	}
	args := []string{"--side", side, "--replay", f, "--workflow-id", r.id, "--replays", "5"}
	if dir := os.Getenv("BENCH_PROFILE_DIR"); dir != "" {
		args = append(args, "--memprofile", filepath.Join(dir, "replay-"+side+"-"+r.id+".allocs"))
		if err := os.WriteFile(filepath.Join(dir, "replay-"+side+"-"+r.id+".json"), r.json, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		b.Fatalf("replay %s (%s): %v: %s", r.id, side, err, out)
	}
	if _, err := fmt.Sscanf(string(out), "allocs %g bytes %g", &allocs, &bytes); err != nil {
		b.Fatalf("replay %s: %q: %v", r.id, out, err)
	}
	return allocs, bytes
}

// approvalTimes are an approval's times from its run's history, in seconds: from the
// Update accepted, and from the workflow task that carried it scheduled, to the next
// activity scheduled.
type approvalTimes struct{ accepted, task float64 }

func accepted(v []approvalTimes) []float64 {
	out := make([]float64, len(v))
	for i, t := range v {
		out[i] = t.accepted
	}
	return out
}

func task(v []approvalTimes) []float64 {
	out := make([]float64, len(v))
	for i, t := range v {
		out[i] = t.task
	}
	return out
}

// approvals starts n runs of workflow, waits a second so each run waits at its gate,
// approves each (gateflow through flowclient.Vote, raw through an Update) and returns
// each approval's times from history and the time the client waited for the Update, in
// seconds.
func approvals(b *testing.B, fc *flowclient.Client, queue, workflow string, n, conc int) (hist []approvalTimes, call []float64) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	hist, call = make([]approvalTimes, n), make([]float64, n)
	err := parallel(n, conc, func(i int) error {
		run, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, workflow, testflows.BenchInput{})
		if err != nil {
			return err
		}
		time.Sleep(time.Second)
		t0 := time.Now()
		if workflow == testflows.BenchFlowApprove {
			_, err = fc.Vote(ctx, run.GetID(), approval.Vote{Gate: testflows.BenchApproveGate, Kind: approval.Approve})
		} else {
			var h client.WorkflowUpdateHandle
			h, err = shared.tc.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
				UpdateName: testflows.BenchApproveGate, Args: []any{"ok"}, WaitForStage: client.WorkflowUpdateStageCompleted})
			if err == nil {
				err = h.Get(ctx, nil)
			}
		}
		call[i] = time.Since(t0).Seconds()
		if err != nil {
			return fmt.Errorf("approve %s: %w", run.GetID(), err)
		}
		if err := run.Get(ctx, nil); err != nil {
			return err
		}
		hist[i], err = approvalHistory(ctx, run.GetID(), run.GetRunID())
		return err
	})
	if err != nil {
		b.Fatalf("%s: %v", workflow, err)
	}
	return hist, call
}

// approvalHistory reads a run's approval times from its history.
func approvalHistory(ctx context.Context, id, runID string) (approvalTimes, error) {
	it := shared.tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var accepted, taskScheduled, lastTask *historypb.HistoryEvent
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return approvalTimes{}, err
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			lastTask = ev
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			accepted, taskScheduled = ev, lastTask
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if accepted != nil && taskScheduled != nil {
				at := ev.GetEventTime().AsTime()
				return approvalTimes{accepted: at.Sub(accepted.GetEventTime().AsTime()).Seconds(),
					task: at.Sub(taskScheduled.GetEventTime().AsTime()).Seconds()}, nil
			}
		}
	}
	return approvalTimes{}, errors.New("no Update accepted followed by an activity scheduled in " + id)
}

// hold starts n runs that take one step and then sleep in a fresh benchworker process,
// and returns the process's growth per held run: heap + stacks (bytes) and goroutines.
func hold(b *testing.B, bin, side, queue, workflow string, n, conc int) (mem heldMemory, goroutines float64) {
	b.Helper()
	var extra []string
	if os.Getenv("BENCH_PROFILE_DIR") != "" {
		extra = []string{"--mem-profile-rate", "1024"} // a finer heap profile of the held runs
	}
	p := startBenchProc(b, bin, side, queue, extra...)
	defer p.stop()
	time.Sleep(time.Second)
	before := p.read(b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	err := parallel(n, conc, func(int) error {
		_, err := shared.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: queue}, workflow, testflows.BenchInput{})
		return err
	})
	if err != nil {
		b.Fatalf("%s: %v", workflow, err)
	}
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		s := p.read(b)
		if s.marked-before.marked >= int64(n) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: only %d of %d held runs took their step", workflow, s.marked-before.marked, n)
		}
	}
	time.Sleep(3 * time.Second) // the workflow tasks after the step (the timers) finish
	after := p.read(b)
	if dir := os.Getenv("BENCH_PROFILE_DIR"); dir != "" {
		p.ask(b, "/heap?file="+filepath.Join(dir, queue+".heap"))
	}
	per := func(v int64) float64 { return float64(v) / float64(n) }
	return heldMemory{heap: per(after.heap - before.heap), stack: per(after.stack - before.stack)}, per(after.goroutines - before.goroutines)
}

// heldMemory is what a held run adds to its worker, in bytes: heap and goroutine stacks.
type heldMemory struct{ heap, stack float64 }

func (m heldMemory) total() float64 { return m.heap + m.stack }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// envInts reads a comma-separated list of positive numbers, def when unset or malformed.
func envInts(b *testing.B, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: %q is not a positive number", name, v, f)
		}
		out = append(out, n)
	}
	return out
}
