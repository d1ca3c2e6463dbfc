package flowctl

import (
	"github.com/gateflow/gateflow/artifacts"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flowclient"
)

func withLive(d *runs.Description, step string, live artifacts.LiveOutput) *runs.Description {
	c := *d
	c.Live = map[string]artifacts.LiveOutput{step: live}
	return &c
}

func lines(attempt int, from int64, texts ...string) artifacts.LiveOutput {
	lo := artifacts.LiveOutput{Attempt: attempt, At: at(10)}
	for i, t := range texts {
		stream := "stdout"
		if strings.HasPrefix(t, "!") {
			stream, t = "stderr", t[1:]
		}
		lo.Lines = append(lo.Lines, artifacts.LiveLine{Seq: from + int64(i), Stream: stream, Text: t})
	}
	return lo
}

func buildRuns() *fakeDescribe {
	failed := done("build", 0, 3000, "")
	failed.Status, failed.ExitCode, failed.Error = runs.StepFailed, exit(2), "exit code 2: boom"
	return &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		desc(runs.StatusRunning),
		withLive(desc(runs.StatusRunning, running("build", 0)), "build", lines(1, 1, "one")),
		withLive(desc(runs.StatusRunning, running("build", 0)), "build", lines(1, 1, "one", "!two")),
		withLive(desc(runs.StatusRunning, running("build", 0)), "build", lines(2, 1, "again")),
		desc(runs.StatusRunning, failed),
	}}}
}

func logsWith(t *testing.T, asJSON bool, f *fakeDescribe, step string, follow bool) (string, error) {
	t.Helper()
	var out bytes.Buffer
	l := newStepLogger(testPrinter(&out, asJSON), f.describe)
	err := l.logs(context.Background(), "hello-1", step, follow, time.Millisecond)
	return out.String(), err
}

func TestLogsFollowPrintsNewLinesThenTheEnd(t *testing.T) {
	out, err := logsWith(t, false, buildRuns(), "build", true)
	assert.Equal(t, "one\nstderr| two\n--- attempt 2\nagain\n"+
		"--- build shell failed after 3s (attempt 1, code 2)\nerror: exit code 2: boom\n", out)
	var ee *exitError
	require.True(t, errors.As(err, &ee), "got %v", err)
	assert.Equal(t, ExitRunFailed, ee.code)
	assert.Equal(t, "step build of run hello-1 ended failed", err.Error())
}

func TestLogsJSON(t *testing.T) {
	out, err := logsWith(t, true, buildRuns(), "build", true)
	require.Error(t, err)
	var events []logsEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e logsEvent
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		events = append(events, e)
	}
	require.Len(t, events, 4, out)
	assert.Equal(t, logsEvent{Event: "line", Run: "hello-1", Step: "build", Attempt: 1, Seq: 2, Stream: "stderr", Text: "two"}, events[1])
	assert.Equal(t, "ended", events[3].Event)
	assert.Equal(t, runs.StepFailed, events[3].Status)
	assert.Equal(t, "exit code 2: boom", events[3].Error)
}

func TestLogsWithoutFollow(t *testing.T) {
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		withLive(desc(runs.StatusRunning, done("build", 0, 1000, "ok\n"), running("build", 1500)), "build#2",
			lines(1, 4, "four", "five")),
	}}}
	f.found["hello-1"][0].State.Steps[1].ActivityID = "build#2"
	out, err := logsWith(t, false, f, "build", false)
	require.NoError(t, err)
	assert.Equal(t, "four\nfive\n", out, "the latest step of the name, running")

	out, err = logsWith(t, false, f, "build#2", false)
	require.NoError(t, err)
	assert.Equal(t, "four\nfive\n", out)

	out, err = logsWith(t, false, &fakeDescribe{found: f.found}, "build", false)
	require.NoError(t, err)
	assert.Equal(t, "four\nfive\n", out)

	f2 := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {desc(runs.StatusRunning, done("build", 0, 1000, "ok\n"))}}}
	out, err = logsWith(t, false, f2, "build", false)
	require.NoError(t, err)
	assert.Equal(t, "--- build shell completed after 1s (attempt 1, code 0)\nok\n", out)
}

func TestLogsLiveWithoutState(t *testing.T) {
	noState := withLive(desc(runs.StatusRunning), "build", lines(1, 1, "one"))
	noState.State, noState.StateError = nil, "query timed out"
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {noState, desc(runs.StatusRunning, done("build", 0, 1000, "one\n"))}}}
	out, err := logsWith(t, false, f, "build", true)
	require.NoError(t, err)
	assert.Equal(t, "one\n--- build shell completed after 1s (attempt 1, code 0)\none\n", out)
}

func TestLogsAgentProgress(t *testing.T) {
	ag := running("review", 0)
	ag.Kind = runs.KindAgent
	p := func(s string) artifacts.LiveOutput { return artifacts.LiveOutput{Attempt: 1, Progress: s} }
	r := desc(runs.StatusRunning, ag)
	doneAg := done("review", 0, 2000, "LGTM")
	doneAg.Kind, doneAg.ExitCode = runs.KindAgent, nil
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		withLive(r, "review", p("waiting for provider x (model m), 1s")),
		withLive(r, "review", p("waiting for provider x (model m), 1s")),
		withLive(r, "review", p("waiting for provider x (model m), 2s")),
		desc(runs.StatusRunning, doneAg),
	}}}
	out, err := logsWith(t, false, f, "review", true)
	require.NoError(t, err)
	assert.Equal(t, "... waiting for provider x (model m), 1s\n... waiting for provider x (model m), 2s\n"+
		"--- review agent completed after 2s (attempt 1, code -)\nLGTM\n", out)
}

func TestLogsUnknownStep(t *testing.T) {
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		desc(runs.StatusRunning, running("build", 0)),
		ended(runs.StatusCompleted, "", done("build", 0, 10, "")),
	}}}
	_, err := logsWith(t, false, f, "deploy", true)
	var ee *exitError
	require.True(t, errors.As(err, &ee), "got %v", err)
	assert.Equal(t, ExitNotFound, ee.code)
	assert.Equal(t, "run hello-1 has no step deploy (flowctl show hello-1 lists its steps)", err.Error())
	assert.Equal(t, 2, f.calls["hello-1"], "-f waits for the step until the run ends")

	_, err = logsWith(t, false, &fakeDescribe{}, "build", false)
	var nf *flowclient.RunNotFoundError
	assert.True(t, errors.As(err, &nf), "got %v", err)
}

func TestWatchPrintsLiveOutput(t *testing.T) {
	f := &fakeDescribe{found: map[string][]*runs.Description{"hello-1": {
		withLive(desc(runs.StatusRunning, running("build", 0)), "build", lines(1, 1, "one")),
		withLive(desc(runs.StatusRunning, running("build", 0)), "build", lines(1, 1, "one", "!two")),
		ended(runs.StatusCompleted, "", done("build", 0, 44, "one two")),
	}}}
	out, err := watchWith(t, false, f, "hello-1")
	require.NoError(t, err)
	assert.Contains(t, out, "output    build            one\n")
	assert.Contains(t, out, "output    build            stderr| two\n")
	assert.Equal(t, 1, strings.Count(out, " one\n"), "a line is printed once:\n%s", out)

	out, err = watchWith(t, true, &fakeDescribe{found: f.found}, "hello-1")
	require.NoError(t, err)
	assert.Contains(t, out, `"event":"output"`)
	assert.Contains(t, out, `"output":{"step":"build","attempt":1,"seq":2,"stream":"stderr","text":"two"}`)
}

func TestLogsOfAStepInAChildRun(t *testing.T) {
	child := func(status runs.StepStatus, started bool) runs.Step {
		s := runs.Step{Name: "deploy", ActivityID: "deploy", Kind: runs.KindChild, Status: status, Attempt: 1, StartedAt: at(0)}
		if started {
			s.Child = &runs.Child{ID: "hello-1-deploy", Workflow: "deploy"}
		}
		return s
	}
	childRun := func(steps ...runs.Step) *runs.Description {
		d := desc(runs.StatusRunning, steps...)
		d.ID, d.State.ID = "hello-1-deploy", "hello-1-deploy"
		return d
	}
	f := &fakeDescribe{found: map[string][]*runs.Description{
		"hello-1": {
			desc(runs.StatusRunning),                                 // the child step has not started
			desc(runs.StatusRunning, child(runs.StepRunning, false)), // nor its run
			desc(runs.StatusRunning, child(runs.StepRunning, true)),
		},
		"hello-1-deploy": {
			childRun(),
			withLive(childRun(running("build", 0)), "build", lines(1, 1, "compiling")),
			childRun(done("build", 0, 2000, "built")),
		},
	}}
	out, err := logsWith(t, false, f, "deploy/build", true)
	require.NoError(t, err)
	assert.Equal(t, "compiling\n--- build shell completed after 2s (attempt 1, code 0)\nbuilt\n", out)

	// The run's own step of that label wins (a group's step), and a missing child step is
	// the usual not-found error.
	grouped := done("build", 0, 1000, "the group's")
	grouped.Group = "deploy"
	f = &fakeDescribe{found: map[string][]*runs.Description{
		"hello-1":        {desc(runs.StatusRunning, child(runs.StepRunning, true), grouped)},
		"hello-1-deploy": {childRun(done("build", 0, 2000, "the child's"))},
	}}
	out, err = logsWith(t, false, f, "deploy/build", false)
	require.NoError(t, err)
	assert.Contains(t, out, "the group's")
	_, err = logsWith(t, false, f, "deploy/nope", false)
	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, ExitNotFound, ee.code)
	assert.Contains(t, err.Error(), "run hello-1-deploy has no step nope")
}
