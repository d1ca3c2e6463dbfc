package flowctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/signals"
)

var watchT0 = time.Date(2026, 11, 30, 1, 17, 53, 0, time.UTC)

func at(ms int) time.Time { return watchT0.Add(time.Duration(ms) * time.Millisecond) }

func atp(ms int) *time.Time { t := at(ms); return &t }

func exit(c int) *int { return &c }

func running(name string, startMS int) runs.Step {
	return runs.Step{Name: name, ActivityID: name, Kind: runs.KindShell, Status: runs.StepRunning, Attempt: 1,
		RunAttempt: 1, StartedAt: at(startMS)}
}

func done(name string, startMS, endMS int, out string) runs.Step {
	s := running(name, startMS)
	s.Status, s.EndedAt, s.DurationMS, s.Output, s.ExitCode = runs.StepCompleted, atp(endMS), int64(endMS-startMS), out, exit(0)
	return s
}

func desc(status runs.Status, steps ...runs.Step) *runs.Description {
	return &runs.Description{ID: "hello-1", Workflow: "hello", Status: status, StartTime: watchT0,
		State: &runs.State{ID: "hello-1", Workflow: "hello", Status: status, Steps: steps}}
}

func ended(status runs.Status, result string, steps ...runs.Step) *runs.Description {
	d := desc(status, steps...)
	d.CloseTime = atp(127)
	if result != "" {
		d.Result = json.RawMessage(result)
	}
	return d
}

// fakeDescribe answers with the descriptions in turn, then the last one forever.
type fakeDescribe struct {
	found map[string][]*runs.Description
	errs  []error // returned (for the main run) before the descriptions, one per call
	calls map[string]int
}

func (f *fakeDescribe) describe(_ context.Context, id string) (*runs.Description, error) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	n := f.calls[id]
	f.calls[id]++
	ds, ok := f.found[id]
	if !ok {
		return nil, &flowclient.RunNotFoundError{ID: id}
	}
	if n < len(f.errs) && f.errs[n] != nil {
		return nil, f.errs[n]
	}
	return ds[min(n, len(ds)-1)], nil
}

func watchWith(t *testing.T, asJSON bool, f *fakeDescribe, id string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	w := newWatcher(testPrinter(&out, asJSON), f.describe)
	w.now = func() time.Time { return at(100) }
	err := w.watch(context.Background(), id, time.Millisecond)
	return out.String(), err
}

func helloRuns() *fakeDescribe {
	return &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		desc(runs.StatusRunning),
		desc(runs.StatusRunning, running("greet", 0)),
		desc(runs.StatusRunning, done("greet", 0, 44, "Hello, Ada!"), running("shout", 50)),
		ended(runs.StatusCompleted, `{"greeting":"Hello, Ada!"}`, done("greet", 0, 44, "Hello, Ada!"), done("shout", 50, 102, "HELLO, ADA!")),
	}}}
}

func TestWatchPrintsStepsAsTheyStartAndFinish(t *testing.T) {
	out, err := watchWith(t, false, helloRuns(), "hello-1")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 10, out)
	assert.Equal(t, "Watching hello run hello-1 (running), every 1ms.", lines[0])
	assert.Regexp(t, `^\d\d:\d\d:\d\d  progress  running, 0 step\(s\) done, 0 running, cost \$0\.0000$`, lines[1])
	assert.Regexp(t, `^\d\d:\d\d:\d\d  started   greet\s+shell$`, lines[2])
	assert.Regexp(t, `progress  running, 0 step\(s\) done, 1 running, cost \$0\.0000$`, lines[3])
	assert.Regexp(t, `^\d\d:\d\d:\d\d  finished  greet\s+shell\s+completed\s+44ms\s+-\s+Hello, Ada!$`, lines[4])
	assert.Regexp(t, `started   shout\s+shell$`, lines[5])
	assert.Regexp(t, `progress  running, 1 step\(s\) done, 1 running`, lines[6])
	assert.Regexp(t, `finished  shout\s+shell\s+completed\s+52ms\s+-\s+HELLO, ADA!$`, lines[7])
	assert.Regexp(t, `^\d\d:\d\d:\d\d  ended     completed after 127ms, 2 step\(s\), cost \$0\.0000$`, lines[8])
	assert.Equal(t, `  result {"greeting":"Hello, Ada!"}`, lines[9])
}

func TestWatchJSONPrintsOneEventPerLine(t *testing.T) {
	out, err := watchWith(t, true, helloRuns(), "hello-1")
	require.NoError(t, err)
	var events []watchEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e watchEvent
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		events = append(events, e)
	}
	var kinds []string
	for _, e := range events {
		k := e.Event
		if e.Step != nil {
			k += " " + e.Step.Name
		}
		kinds = append(kinds, k)
		assert.Equal(t, "hello-1", e.Run)
	}
	assert.Equal(t, []string{"progress", "step_started greet", "progress", "step_finished greet", "step_started shout",
		"progress", "step_finished shout", "ended"}, kinds)
	fin := events[3]
	assert.Equal(t, at(44), fin.Time)
	assert.Equal(t, runs.StepCompleted, fin.Step.Status)
	assert.Equal(t, int64(44), fin.Step.DurationMS)
	assert.Equal(t, "Hello, Ada!", fin.Step.Detail)
	require.NotNil(t, fin.Step.ExitCode)
	assert.Equal(t, 0, *fin.Step.ExitCode)
	last := events[len(events)-1]
	assert.Equal(t, runs.StatusCompleted, last.Status)
	assert.Equal(t, int64(127), last.DurationMS)
	assert.Equal(t, &stepCounts{Done: 2}, last.Steps)
	assert.JSONEq(t, `{"greeting":"Hello, Ada!"}`, string(last.Result))
}

func TestWatchFinishedRunPrintsEveryStepOnce(t *testing.T) {
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		ended(runs.StatusCompleted, "", done("greet", 0, 44, "a"), done("shout", 50, 102, "b")),
	}}}
	out, err := watchWith(t, true, f, "hello-1")
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(out, `"event":"step_started"`), out)
	assert.Equal(t, 2, strings.Count(out, `"event":"step_finished"`), out)
	assert.Equal(t, 1, strings.Count(out, `"event":"ended"`), out)
	assert.Equal(t, 1, f.calls["hello-1"], "an ended run is read once")
}

func TestWatchRunThatDidNotCompleteExits5(t *testing.T) {
	failed := done("explode", 0, 10, "")
	failed.Status, failed.Error, failed.ExitCode = runs.StepFailed, "exit code 3: disk full", exit(3)
	d := ended(runs.StatusFailed, "", failed)
	d.Error = "step explode: exit code 3: disk full"
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {d}}}
	out, err := watchWith(t, false, f, "hello-1")
	require.Error(t, err)
	assert.Equal(t, ExitRunFailed, classify(err))
	assert.Equal(t, "run hello-1 ended failed", err.Error())
	assert.Regexp(t, `finished  explode\s+shell\s+failed\s+10ms\s+-\s+exit code 3: disk full`, out)
	assert.Contains(t, out, "ended     failed after 127ms")
	assert.Contains(t, out, "  error  step explode: exit code 3: disk full")

	warn := ended(runs.StatusWarning, "", done("a", 0, 1, ""))
	_, err = watchWith(t, false, &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {warn}}}, "hello-1")
	assert.NoError(t, err, "completed with a warning is a success")
}

func shipWaiting(waiting ...string) *runs.Description {
	in, err := signals.NewInput("release-notes", signals.InputRequest{Prompt: "Release notes for 2.0.0",
		Assignees: []string{"group:release"}}, watchT0)
	if err != nil {
		panic(err)
	}
	g, err := approval.Open("ship", approval.Request{Message: "Ship 2.0.0?", Approvers: []string{"group:release"}, Required: 2}, watchT0)
	if err != nil {
		panic(err)
	}
	step := running("release-notes", 5)
	step.Kind = runs.KindInput
	d := desc(runs.StatusAwaitingInput, done("prepare", 0, 4, ""), step)
	d.ID, d.Workflow, d.State.ID = "ship-2.0.0", "ship", "ship-2.0.0"
	d.State.Waiting = waiting
	d.State.Inputs = []*signals.Input{in}
	d.State.Gates = []*approval.Gate{g}
	return d
}

func TestWatchStopsWhenTheRunWaitsForAPerson(t *testing.T) {
	f := &fakeDescribe{found: map[string][]*runs.Description{"ship-2.0.0": {shipWaiting("input:release-notes")}}}
	out, err := watchWith(t, false, f, "ship-2.0.0")
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d  waiting   input:release-notes \(awaiting_input\)$`, out)
	assert.Contains(t, out, "\n  input release-notes: Release notes for 2.0.0 (from group:release)\n"+
		"    flowctl input ship-2.0.0 release-notes --data '{...}'\n")
	assert.Regexp(t, `started   release-notes\s+input`, out)
	assert.NotContains(t, out, "finished  release-notes")

	out, err = watchWith(t, true, f, "ship-2.0.0")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last watchEvent
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
	assert.Equal(t, "waiting", last.Event)
	assert.Equal(t, []string{"input:release-notes"}, last.Waiting)
	assert.Equal(t, []watchRequest{{What: "input:release-notes", Detail: "input release-notes: Release notes for 2.0.0 (from group:release)",
		Command: "flowctl input ship-2.0.0 release-notes --data '{...}'"}}, last.Requests)
}

func TestWatchFollowsARunWaitingForASignal(t *testing.T) {
	waitingSignal := shipWaiting("signal:deploy-done/2.0.0")
	waitingSignal.Status = runs.StatusWaitingSignal
	f := &fakeDescribe{found: map[string][]*runs.Description{"ship-2.0.0": {
		waitingSignal, waitingSignal,
		{ID: "ship-2.0.0", Workflow: "ship", Status: runs.StatusCompleted, StartTime: watchT0, CloseTime: atp(5000)},
	}}}
	out, err := watchWith(t, false, f, "ship-2.0.0")
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(out, "progress"), "an unchanged run prints no new progress: %s", out)
	assert.Contains(t, out, "progress  waiting_signal, 1 step(s) done, 1 running, cost $0.0000, waiting for signal:deploy-done/2.0.0")
	assert.Contains(t, out, "ended     completed after 5s")
}

func TestPersonRequests(t *testing.T) {
	st := shipWaiting().State
	st.Waiting = []string{"approval:ship", "budget", "input:release-notes", "signal:deploy-done/2.0.0"}
	st.CostUSD = decimal.RequireFromString("1.5")
	st.Budget = &budget.Ledger{Cap: budget.Cap{Set: true, Amount: decimal.RequireFromString("1.5")}}
	reqs := personRequests("ship-2.0.0", st, plainHint)
	require.Len(t, reqs, 3)
	assert.Equal(t, "approval:ship", reqs[0].What)
	assert.Equal(t, "approval ship: Ship 2.0.0? (0 of 2 from group:release, no deadline)", reqs[0].Detail)
	assert.Equal(t, "flowctl approve ship-2.0.0 ship", reqs[0].Command)
	assert.Equal(t, "budget", reqs[1].What)
	assert.Contains(t, reqs[1].Detail, "budget paused: $1.5000 of")
	assert.Equal(t, "flowctl budget raise ship-2.0.0 --to USD", reqs[1].Command)
	assert.Equal(t, "flowctl input ship-2.0.0 release-notes --data '{...}'", reqs[2].Command)

	assert.Empty(t, personRequests("r", &runs.State{Waiting: []string{"signal:deploy-done"}}, plainHint), "signals come from systems")
}

func TestWatchShowsChildStepsLive(t *testing.T) {
	child := running("smoke", 10)
	child.Kind = runs.KindChild
	child.Child = &runs.Child{ID: "release-1/smoke", Workflow: "smoke", Status: runs.StatusRunning}
	parent := desc(runs.StatusRunning, done("build", 0, 9, "built"), child)
	parent.ID = "release-1"
	finished := child
	finished.Status, finished.EndedAt, finished.DurationMS = runs.StepCompleted, atp(90), 80
	finished.Child = &runs.Child{ID: "release-1/smoke", Workflow: "smoke", Status: runs.StatusCompleted,
		Steps: []runs.Step{done("boot", 12, 20, "booting"), done("probe", 21, 30, "3")}}
	end := ended(runs.StatusCompleted, "", done("build", 0, 9, "built"), finished)
	end.ID = "release-1"
	f := &fakeDescribe{found: map[string][]*runs.Description{
		"release-1":       {parent, end},
		"release-1/smoke": {desc(runs.StatusRunning, done("boot", 12, 20, "booting"))},
	}}
	out, err := watchWith(t, true, f, "release-1")
	require.NoError(t, err)
	var seq []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e watchEvent
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Step != nil {
			seq = append(seq, e.Event+" "+e.Step.Name)
		}
	}
	assert.Equal(t, []string{
		"step_started build", "step_finished build", "step_started smoke",
		"step_started smoke/boot", "step_finished smoke/boot", // read from the child while it runs
		"step_finished smoke", "step_started smoke/probe", "step_finished smoke/probe",
	}, seq)
}

func TestWatchErrors(t *testing.T) {
	_, err := watchWith(t, false, &fakeDescribe{}, "nope")
	assert.Equal(t, ExitNotFound, classify(err))

	f := helloRuns()
	f.errs = []error{nil, errors.New("transient"), errors.New("transient")}
	out, err := watchWith(t, false, f, "hello-1")
	require.NoError(t, err, "errors after the first read are retried")
	assert.Contains(t, out, "ended     completed")

	f = helloRuns()
	f.errs = []error{errors.New("boom")}
	_, err = watchWith(t, false, f, "hello-1")
	assert.EqualError(t, err, "boom", "an error on the first read ends the watch")
}

func TestWatchFlags(t *testing.T) {
	addr := closedAddress(t)
	code, _, stderr := run(t, "", "--address", addr, "watch", "r1", "--interval", "0s")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--interval 0s: want a positive duration")
	code, _, stderr = run(t, "", "--address", addr, "watch")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "watch needs RUN")
	code, _, stderr = run(t, "", "--address", addr, "--connect-timeout", "300ms", "watch", "r1")
	assert.Equal(t, ExitUnreachable, code, stderr)
}

// TestWatchRendersStepsAsShowDoes checks that a finished step reads the same in watch as
// in show and the Web UI (runs.Step's display helpers), and that the step object of
// watch -o json keeps its fields.
func TestWatchRendersStepsAsShowDoes(t *testing.T) {
	lint := done("lint", 0, 16, "")
	lint.Group, lint.Status, lint.AllowedFailure, lint.ExitCode = "checks", runs.StepFailed, true, exit(1)
	lint.Error, lint.CostUSD = "exit code 1:\n  lint: 2 problems", decimal.RequireFromString("0.015")
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {ended(runs.StatusWarning, "", lint)}}}

	out, err := watchWith(t, false, f, "hello-1")
	require.NoError(t, err)
	assert.Regexp(t, `finished  checks/lint\s+shell\s+failed \(allowed\)\s+16ms\s+\$0\.0150\s+exit code 1: lint: 2 problems\n`, out)

	var table bytes.Buffer
	tb := newTable(&table, "STEP", "KIND", "STATUS", "ATTEMPT", "DURATION", "COST", "EXIT", "DETAIL")
	addStepRows(tb, []runs.Step{lint}, "", at(100))
	require.NoError(t, tb.flush())
	assert.Regexp(t, `(?m)^checks/lint\s+shell\s+failed \(allowed\)\s+1\s+16ms\s+\$0\.0150\s+1\s+exit code 1: lint: 2 problems$`, table.String())

	out, err = watchWith(t, true, f, "hello-1")
	require.NoError(t, err)
	var e struct {
		Step map[string]any `json:"step"`
	}
	require.NoError(t, json.Unmarshal([]byte(strings.Split(out, "\n")[1]), &e))
	var keys []string
	for k := range e.Step {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"name", "kind", "status", "attempt", "run_attempt", "started_at", "ended_at",
		"duration_ms", "cost_usd", "exit_code", "detail", "allowed_failure"}, keys)
	assert.Equal(t, "checks/lint", e.Step["name"])
	assert.Equal(t, "exit code 1: lint: 2 problems", e.Step["detail"], "the whole detail, on one line")
}

func TestPersonRequestsSkipWhatItCannotRead(t *testing.T) {
	st := shipWaiting().State
	st.Waiting = []string{"approval:", "budget:x", "nonsense", "resume:release", "permit:deploys", "input:release-notes"}
	reqs := personRequests("ship-2.0.0", st, plainHint)
	require.Len(t, reqs, 1)
	assert.Equal(t, "input:release-notes", reqs[0].What)
}

// TestWatchReadsAnIdleRunOnlyWhenItsHistoryChanges: while no step runs, watch waits for a
// history event instead of reading the run every interval.
func TestWatchReadsAnIdleRunOnlyWhenItsHistoryChanges(t *testing.T) {
	idle := desc(runs.StatusWaitingSignal, done("greet", 0, 44, "Hello, Ada!"))
	idle.State.Waiting = []string{"signal:go"}
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		idle, ended(runs.StatusCompleted, `{}`, done("greet", 0, 44, "Hello, Ada!")),
	}}}
	changes := make(chan struct{}, 1)
	var out bytes.Buffer
	w := newWatcher(testPrinter(&out, false), f.describe)
	w.now = func() time.Time { return at(100) }
	w.changes = changes
	done := make(chan error, 1)
	go func() { done <- w.watch(context.Background(), "hello-1", time.Millisecond) }()

	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("watch ended before the history changed: %v\n%s", err, out.String())
	default:
	}
	changes <- struct{}{}
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not read the run after its history changed")
	}
	assert.Equal(t, 2, f.calls["hello-1"], "one read while idle (not one per 1ms interval), one after the change")
	assert.Contains(t, out.String(), "ended     completed")
}
