package integration

import (
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
)

// BenchmarkGateflowVsRawSDK does the same work as gateflow flows and as raw Temporal SDK
// workflows on the same embedded server, each side served by its own benchworker process,
// and prints one markdown table. `make bench` runs it.
//
// Variants (rows): K custom steps for each K of BENCH_STEPS (default 1,5,20,100), 5 shell
// steps, 5 custom steps started through flowclient (gateflow's client; raw starts with the
// raw client), 5 and 20 steps with an event sink on the gateflow side, the 5 steps as a
// YAML definition, and an agent loop of 5 turns each calling 1 tool (then the answering
// turn) against the same loop written by hand on the raw SDK (a turn activity and a tool
// activity), both asking the same local provider (testflows.BenchChatHandler). A throughput phase is BENCH_RUNS runs (default 100) of K ≤ 5 steps, or
// about as many steps in fewer runs for larger K (at least 10), BENCH_CONCURRENCY (50) at
// a time.
//
// BENCH_ROUNDS rounds (default 3): each runs every row's throughput phase for both sides,
// which side goes first alternating from round to round, then BENCH_APPROVALS approvals
// per side (Update accepted → next activity scheduled, from history timestamps), then the
// hold phases: BENCH_HELD runs (1000) held after one step in a fresh worker process per
// side, whose heap + goroutine stacks and goroutines are read before and after. The table
// gives each timed metric's geometric mean over the rounds, per side, and the geometric
// mean of the per-round ratios gateflow/raw with their spread (min–max); deterministic
// counts (history events and bytes per step of one run, allocations per replayed run in a
// fresh process) have no spread. BENCH_PROFILE_DIR writes a CPU profile of each
// throughput worker per round there (bench-raw-roundN.cpu, bench-flow-…, bench-sink-…),
// each replayed history with the allocation profile of its replays
// (replay-SIDE-ID.json, .allocs) and a heap profile of each hold phase's worker
// (bench-hold-SIDE-….heap, sampled every 1 KB).
func BenchmarkGateflowVsRawSDK(b *testing.B) {
	runs, conc, held := envInt("BENCH_RUNS", 100), envInt("BENCH_CONCURRENCY", 50), envInt("BENCH_HELD", 1000)
	rounds, nApprovals := envInt("BENCH_ROUNDS", 3), envInt("BENCH_APPROVALS", 50)
	steps := envInts(b, "BENCH_STEPS", []int{1, 5, 20, 100})
	bin := filepath.Join(b.TempDir(), "benchworker")
	if out, err := exec.Command("go", "build", "-o", bin, "./benchworker").CombinedOutput(); err != nil {
		b.Fatalf("build benchworker: %v: %s", err, out)
	}
	provider := httptest.NewServer(testflows.BenchChatHandler()) // the agent loop row's model
	defer provider.Close()
	withProvider := []string{"--openai-url", provider.URL + "/v1"}
	for i := 0; i < b.N; i++ {
		load0, start := loadavg(), time.Now().UTC()
		tag := fmt.Sprint(time.Now().UnixNano())
		rawP := startBenchProc(b, bin, "raw", "bench-raw-"+tag, withProvider...)
		flowP := startBenchProc(b, bin, "flow", "bench-flow-"+tag, withProvider...)
		sinkP := startBenchProc(b, bin, "flow", "bench-sink-"+tag, "--sink")
		fc := flowclient.New(shared.tc, flowclient.Options{TaskQueue: flowP.queue})
		fcSink := flowclient.New(shared.tc, flowclient.Options{TaskQueue: sinkP.queue})
		rows := benchRows(rawP, flowP, sinkP, steps, runs)
		m := &benchMetrics{}
		for _, row := range rows { // warm up, then the deterministic counts
			for _, s := range []benchSpec{row.raw, row.gf} {
				throughput(b, clientFor(s, sinkP.queue, fc, fcSink), s, row.k, min(5, row.runs), conc)
			}
			gr, rr := record(b, clientFor(row.gf, sinkP.queue, fc, fcSink), row.gf, row.k), record(b, fc, row.raw, row.k)
			m.fixed(row.name+": history events per run", "n", float64(gr.events), float64(rr.events))
			m.fixed(row.name+": history bytes per step", "B", float64(gr.size)/float64(row.k), float64(rr.size)/float64(row.k))
			if row.replay {
				ga, gb := replayAllocs(b, bin, "flow", gr)
				ra, rb := replayAllocs(b, bin, "raw", rr)
				m.fixed(row.name+": allocations per replayed run", "n", ga, ra)
				m.fixed(row.name+": bytes allocated per replayed run", "B", gb, rb)
			}
		}
		for r := 0; r < rounds; r++ {
			gfFirst := r%2 == 1
			for _, p := range []*benchProc{rawP, flowP, sinkP} {
				p.profile(b, "start", fmt.Sprintf("%s-round%d", strings.TrimSuffix(p.queue, "-"+tag), r+1))
			}
			for _, row := range rows {
				var rps, p50, cpu [2]float64 // gateflow, raw
				for _, side := range sideOrder(gfFirst) {
					s := row.raw
					if side == 0 {
						s = row.gf
					}
					rps[side], p50[side], cpu[side] = throughput(b, clientFor(s, sinkP.queue, fc, fcSink), s, row.k, row.runs, conc)
				}
				fmt.Printf("round %d %-26s gateflow %6.1f runs/s p50 %6s   raw %6.1f runs/s p50 %6s\n", r+1, row.name, rps[0], secs(p50[0]), rps[1], secs(p50[1]))
				m.timed(row.name+": runs/s", "runs/s", rps[0], rps[1])
				m.timed(row.name+": p50 latency", "s", p50[0], p50[1])
				m.timed(row.name+": worker CPU per run", "s", cpu[0], cpu[1])
			}
			for _, p := range []*benchProc{rawP, flowP, sinkP} {
				p.profile(b, "stop", "")
			}
			var hist [2][]approvalTimes
			var call [2][]float64
			for _, side := range sideOrder(gfFirst) {
				q, wf := rawP.queue, testflows.BenchRawApprove
				if side == 0 {
					q, wf = flowP.queue, testflows.BenchFlowApprove
				}
				hist[side], call[side] = approvals(b, fc, q, wf, nApprovals, conc)
			}
			for _, q := range []float64{0.5, 0.95} {
				m.timed(fmt.Sprintf("approval: Update accepted → next activity scheduled, p%.0f", q*100), "s", quantile(accepted(hist[0]), q), quantile(accepted(hist[1]), q))
			}
			for _, q := range []float64{0.5, 0.95} {
				m.timed(fmt.Sprintf("approval: Update's workflow task scheduled → next activity scheduled, p%.0f", q*100), "s", quantile(task(hist[0]), q), quantile(task(hist[1]), q))
			}
			m.timed("approval: client's Update call, p50", "s", quantile(call[0], 0.5), quantile(call[1], 0.5))
			var mem [2]heldMemory
			var gor [2]float64
			for _, side := range sideOrder(gfFirst) {
				name, wf := "raw", testflows.BenchRawHold
				if side == 0 {
					name, wf = "flow", testflows.BenchFlowHold
				}
				mem[side], gor[side] = hold(b, bin, name, fmt.Sprintf("bench-hold-%s-%s-%d", name, tag, r), wf, held, conc)
			}
			fmt.Printf("round %d held runs: gateflow %.1f KB (heap %.1f, stacks %.1f) %.2f goroutines, raw %.1f KB (heap %.1f, stacks %.1f) %.2f goroutines per run\n",
				r+1, mem[0].total()/1024, mem[0].heap/1024, mem[0].stack/1024, gor[0], mem[1].total()/1024, mem[1].heap/1024, mem[1].stack/1024, gor[1])
			m.timed(fmt.Sprintf("memory per held run (heap + stacks, %d held)", held), "B", mem[0].total(), mem[1].total())
			m.timed("goroutines per held run", "n", gor[0], gor[1])
		}
		for _, p := range []*benchProc{rawP, flowP, sinkP} {
			p.stop()
		}
		fmt.Printf("\ngateflow vs the raw Temporal SDK — %s, %d CPUs, load average %s at the start, %s at the end; %d rounds, %d runs per phase (fewer for K > 5, ≥ 10), %d at a time, %d approvals, %d held runs per side (%s)\n\n",
			start.Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), load0, loadavg(), rounds, runs, conc, nApprovals, held, time.Since(start).Round(time.Second))
		fmt.Print(m.table())
		fmt.Println()
	}
}

// benchRows are the benchmark's variants.
func benchRows(rawP, flowP, sinkP *benchProc, steps []int, runs int) []benchRow {
	raw := func(wf string) benchSpec { return benchSpec{side: "raw", proc: rawP, queue: rawP.queue, workflow: wf} }
	gf := func(p *benchProc, wf string) benchSpec {
		return benchSpec{side: "flow", proc: p, queue: p.queue, workflow: wf}
	}
	per := func(k int) int { return max(10, min(runs, runs*5/k)) }
	var rows []benchRow
	for _, k := range steps {
		rows = append(rows, benchRow{name: fmt.Sprintf("custom K=%d", k), k: k, runs: per(k),
			gf: gf(flowP, testflows.BenchFlowSteps), raw: raw(testflows.BenchRawSteps), replay: true})
	}
	viaClient := gf(flowP, testflows.BenchFlowSteps)
	viaClient.flowStart = true
	return append(rows,
		benchRow{name: "shell K=5", k: 5, runs: per(5), gf: gf(flowP, testflows.BenchFlowShell), raw: raw(testflows.BenchRawShell)},
		benchRow{name: "flowclient start K=5", k: 5, runs: per(5), gf: viaClient, raw: raw(testflows.BenchRawSteps)},
		benchRow{name: "event sink K=5", k: 5, runs: per(5), gf: gf(sinkP, testflows.BenchFlowSteps), raw: raw(testflows.BenchRawSteps)},
		benchRow{name: "event sink K=20", k: 20, runs: per(20), gf: gf(sinkP, testflows.BenchFlowSteps), raw: raw(testflows.BenchRawSteps)},
		benchRow{name: "YAML definition K=5", k: 5, runs: per(5), gf: gf(flowP, testflows.BenchDefSteps), raw: raw(testflows.BenchRawSteps)},
		benchRow{name: "agent loop 5 turns × 1 tool", k: 5, runs: per(5), gf: gf(flowP, testflows.BenchFlowAgent),
			raw: raw(testflows.BenchRawAgent), replay: true},
	)
}

// clientFor is the flowclient of s's task queue (its catalog is what Start reads).
func clientFor(s benchSpec, sinkQ string, fc, fcSink *flowclient.Client) *flowclient.Client {
	if s.queue == sinkQ {
		return fcSink
	}
	return fc
}

// sideOrder is the order of the sides in a round: 0 is gateflow, 1 raw.
func sideOrder(gfFirst bool) []int {
	if gfFirst {
		return []int{0, 1}
	}
	return []int{1, 0}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// benchMetric is one line of the table: a value per side, per round for a timed metric.
type benchMetric struct {
	name, unit string
	gf, raw    []float64
	timed      bool
}

// benchMetrics are the table's lines in the order they were first added.
type benchMetrics struct{ lines []*benchMetric }

func (m *benchMetrics) line(name, unit string, timed bool) *benchMetric {
	for _, l := range m.lines {
		if l.name == name {
			return l
		}
	}
	l := &benchMetric{name: name, unit: unit, timed: timed}
	m.lines = append(m.lines, l)
	return l
}

func (m *benchMetrics) timed(name, unit string, gf, raw float64) {
	l := m.line(name, unit, true)
	l.gf, l.raw = append(l.gf, gf), append(l.raw, raw)
}

func (m *benchMetrics) fixed(name, unit string, gf, raw float64) {
	l := m.line(name, unit, false)
	l.gf, l.raw = []float64{gf}, []float64{raw}
}

// geomean is the geometric mean of v, of positive numbers; NaN if one is not.
func geomean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		if x <= 0 {
			return math.NaN()
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

// table is the markdown table: timed lines first, then the deterministic counts.
func (m *benchMetrics) table() string {
	var out strings.Builder
	out.WriteString("| metric | gateflow | raw SDK | gateflow / raw | per-round ratios (min–max) |\n|---|---:|---:|---:|---:|\n")
	for _, timed := range []bool{true, false} {
		for _, l := range m.lines {
			if l.timed != timed {
				continue
			}
			ratios := make([]float64, len(l.gf))
			for i := range l.gf {
				ratios[i] = l.gf[i] / l.raw[i]
			}
			spread := "—"
			if timed {
				spread = fmt.Sprintf("%.2f–%.2f", slices.Min(ratios), slices.Max(ratios))
			}
			fmt.Fprintf(&out, "| %s | %s | %s | %.2f× | %s |\n", l.name, format(l.unit, geomean(l.gf)), format(l.unit, geomean(l.raw)), geomean(ratios), spread)
		}
	}
	return out.String()
}

// format writes a value in its unit.
func format(unit string, v float64) string {
	switch unit {
	case "s":
		return secs(v)
	case "B":
		switch {
		case math.Abs(v) >= 1<<20:
			return fmt.Sprintf("%.2f MB", v/(1<<20))
		case math.Abs(v) >= 1<<10:
			return fmt.Sprintf("%.1f KB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	case "runs/s":
		return fmt.Sprintf("%.1f/s", v)
	}
	if math.Abs(v-math.Round(v)) < 1e-6 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// secs writes seconds as ms below 10 s.
func secs(v float64) string {
	switch {
	case v < 0.1:
		return fmt.Sprintf("%.1f ms", v*1000)
	case v < 10:
		return fmt.Sprintf("%.0f ms", v*1000)
	}
	return fmt.Sprintf("%.1f s", v)
}
