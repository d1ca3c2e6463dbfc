package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/protocol"
)

// checkFlowdef parses and validates a definition written in a test.
func checkFlowdef(t *testing.T, file, src string) *flowdef.Definition {
	t.Helper()
	def, err := flowdef.Check(file, []byte(src), &flowdef.StaticRegistry{})
	require.NoError(t, err)
	return def
}

const envelopeGated = `
name: it-envelope-gated
concurrency: {max_runs: 1, on_overflow: refuse}
steps:
  - id: ok
    gate: {type: approval, prompt: "Go?", approvers: [alice]}
  - id: done
    finish: {output: {approved: true}}
`

const envelopeSource = `
name: it-envelope-source
inputs: {type: object, properties: {value: {type: string}}}
steps:
  - id: done
    finish: {output: {value: "from-${{ inputs.value }}"}}
`

const envelopeTriggered = `
name: it-envelope-triggered
inputs: {type: object, properties: {value: {type: string}}, required: [value]}
triggers:
  - {on: completed, flow: it-envelope-source}
steps:
  - id: done
    finish: {output: {got: "${{ inputs.value }}"}}
`

// A definition's concurrency is flow.MaxRuns: with max_runs 1 and on_overflow refuse, a
// second start is refused while the first run waits on its approval.
func TestFlowdefEnvelopeMaxRunsRefuse(t *testing.T) {
	c := flowdefWorker(t, "flowdef-envelope-maxruns", nil, buildInterp(t, checkFlowdef(t, "gated.yaml", envelopeGated)))
	ctx := ctxT(t, 2*time.Minute)

	first, err := c.Start(ctx, "it-envelope-gated", map[string]any{}, core.StartOptions{})
	require.NoError(t, err)
	eventually(t, c, first.ID, "waits for its approval", waitingFor("approval:ok"))

	_, err = c.Start(ctx, "it-envelope-gated", map[string]any{}, core.StartOptions{})
	var mr *flowclient.MaxRunsError
	require.True(t, errors.As(err, &mr), "%v", err)
	assert.Equal(t, []string{first.ID}, mr.Live)

	_, err = c.Vote(ctx, first.ID, approval.Vote{Gate: "ok", Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
	d, err := c.Wait(ctx, first.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	assert.JSONEq(t, `{"approved": true}`, string(d.Result))
}

// A definition's trigger on another definition's completion is flow.OnRunOf: the ended
// run's output is the triggered run's input.
func TestFlowdefEnvelopeTrigger(t *testing.T) {
	c := flowdefWorker(t, "flowdef-envelope-trigger", nil,
		buildInterp(t, checkFlowdef(t, "source.yaml", envelopeSource)),
		buildInterp(t, checkFlowdef(t, "triggered.yaml", envelopeTriggered)))
	ctx := ctxT(t, 2*time.Minute)

	run, err := c.Start(ctx, "it-envelope-source", map[string]any{"value": "v1"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	id := protocol.TriggeredID("it-envelope-triggered", run.ID, run.RunID)
	require.Eventually(t, func() bool {
		_, err := c.Describe(ctx, id)
		return err == nil
	}, time.Minute, 200*time.Millisecond, "the triggered run starts")
	td, err := c.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, td.Status, td.Error)
	assert.Equal(t, "trigger", td.CreatedBy)
	assert.JSONEq(t, `{"got": "from-v1"}`, string(td.Result))
}

// envelopeKeyed is a definition whose runs are limited per repo, waiting on an approval.
func envelopeKeyed(name, overflow string) string {
	return `
name: ` + name + `
inputs: {type: object, properties: {repo: {type: string}}}
concurrency: {key: "${{ inputs.repo }}", max_runs: 1, on_overflow: ` + overflow + `}
steps:
  - id: ok
    gate: {type: approval, prompt: "Go?", approvers: [alice]}
  - id: done
    finish: {output: {repo: "${{ inputs.repo }}"}}
`
}

// uniqueQueue is a task queue of its own for one test run (so -count=N passes).
func uniqueQueue(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }

func approveGate(t *testing.T, c *flowclient.Client, id, gate string) {
	t.Helper()
	_, err := c.Vote(ctxT(t, 10*time.Second), id, approval.Vote{Gate: gate, Kind: approval.Approve, By: "alice"})
	require.NoError(t, err)
}

// startKeyed starts name with repo through flowctl, which starts by name with no Go
// function: the key is rendered from the catalog's key template.
func startKeyed(t *testing.T, queue, name, repo string) (string, result) {
	t.Helper()
	r := run(t, queue, "start", name, "--input", `{"repo": "`+repo+`"}`, "-o", "json")
	if r.code != 0 {
		return "", r
	}
	var started core.Run
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &started), r.stdout)
	return started.ID, r
}

// concurrency.key: at most max_runs live runs per key. With queue, a second run of the
// same key waits in pending while one of another key runs at once; with refuse, flowctl
// start of a held key is refused and starts nothing; with replace, the oldest run of that
// key only is cancelled.
func TestFlowdefEnvelopeConcurrencyKey(t *testing.T) {
	queue := uniqueQueue("flowdef-envelope-key")
	c := flowdefWorker(t, queue, nil,
		buildInterp(t, checkFlowdef(t, "queue.yaml", envelopeKeyed("it-keyed-queue", "queue"))),
		buildInterp(t, checkFlowdef(t, "refuse.yaml", envelopeKeyed("it-keyed-refuse", "refuse"))),
		buildInterp(t, checkFlowdef(t, "replace.yaml", envelopeKeyed("it-keyed-replace", "replace"))))
	ctx := ctxT(t, 2*time.Minute)
	cat, err := c.Workflows(ctx)
	require.NoError(t, err)
	info, ok := cat.Lookup("it-keyed-queue")
	require.True(t, ok)
	assert.Equal(t, "{repo}", info.MaxRunsKey, "the catalog carries the key template")

	t.Run("queue", func(t *testing.T) {
		t.Parallel()
		a1, r := startKeyed(t, queue, "it-keyed-queue", "web")
		require.Equal(t, 0, r.code, r.stderr)
		eventually(t, c, a1, "the first web run waits for its approval", waitingFor("approval:ok"))
		a2, r := startKeyed(t, queue, "it-keyed-queue", "web")
		require.Equal(t, 0, r.code, r.stderr)
		b1, r := startKeyed(t, queue, "it-keyed-queue", "api")
		require.Equal(t, 0, r.code, r.stderr)
		d := eventually(t, c, a2, "the second web run waits for its key's permit", waitingFor("permit:flow:it-keyed-queue:web"))
		assert.Equal(t, runs.StatusPending, d.Status)
		eventually(t, c, b1, "the api run runs alongside", waitingFor("approval:ok"))

		approveGate(t, c, a1, "ok")
		eventually(t, c, a2, "the second web run runs once the first ended", waitingFor("approval:ok"))
		approveGate(t, c, a2, "ok")
		approveGate(t, c, b1, "ok")
		for id, repo := range map[string]string{a1: "web", a2: "web", b1: "api"} {
			d, err := c.Wait(ctx, id)
			require.NoError(t, err)
			require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
			assert.JSONEq(t, `{"repo": "`+repo+`"}`, string(d.Result))
		}
	})

	t.Run("refuse", func(t *testing.T) {
		t.Parallel()
		a1, r := startKeyed(t, queue, "it-keyed-refuse", "web")
		require.Equal(t, 0, r.code, r.stderr)
		eventually(t, c, a1, "the web run waits for its approval", waitingFor("approval:ok"))

		_, r = startKeyed(t, queue, "it-keyed-refuse", "web")
		assert.Equal(t, flowctl.ExitRefused, r.code, r.stdout+r.stderr)
		assert.Contains(t, r.stderr, `start it-keyed-refuse: the flow allows at most 1 live runs per concurrency key (max runs, on overflow refuse) and key "web" has 1: `+a1)
		assert.Empty(t, r.stdout, "nothing started")
		_, err := c.Start(ctx, "it-keyed-refuse", map[string]any{"repo": "web"}, core.StartOptions{ID: "keyed-refused-" + queue})
		var mr *flowclient.MaxRunsError
		require.ErrorAs(t, err, &mr)
		assert.Equal(t, "web", mr.Key)
		assert.Equal(t, []string{a1}, mr.Live)
		_, err = c.Describe(ctx, "keyed-refused-"+queue)
		var nf *flowclient.RunNotFoundError
		assert.ErrorAs(t, err, &nf, "the refused start started nothing")

		r = run(t, queue, "start", "it-keyed-refuse", "--input", `{}`)
		assert.Equal(t, flowctl.ExitUsage, r.code, r.stdout+r.stderr)
		assert.Contains(t, r.stderr, "concurrency key {repo}: the input has no field repo")

		b1, r := startKeyed(t, queue, "it-keyed-refuse", "api")
		require.Equal(t, 0, r.code, "another key is admitted: %s", r.stderr)
		eventually(t, c, b1, "the api run runs", waitingFor("approval:ok"))
		approveGate(t, c, a1, "ok")
		approveGate(t, c, b1, "ok")
		for _, id := range []string{a1, b1} {
			d, err := c.Wait(ctx, id)
			require.NoError(t, err)
			require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		}
	})

	t.Run("replace", func(t *testing.T) {
		t.Parallel()
		a1, r := startKeyed(t, queue, "it-keyed-replace", "web")
		require.Equal(t, 0, r.code, r.stderr)
		b1, r := startKeyed(t, queue, "it-keyed-replace", "api")
		require.Equal(t, 0, r.code, r.stderr)
		eventually(t, c, a1, "the web run waits for its approval", waitingFor("approval:ok"))
		eventually(t, c, b1, "the api run waits for its approval", waitingFor("approval:ok"))

		a2, r := startKeyed(t, queue, "it-keyed-replace", "web")
		require.Equal(t, 0, r.code, r.stderr)
		d, err := c.Wait(ctx, a1)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusCancelled, d.Status)
		assert.Contains(t, d.State.Error, "replaced by "+a2)
		eventually(t, c, a2, "the new web run runs", waitingFor("approval:ok"))
		d, err = c.Describe(ctx, b1)
		require.NoError(t, err)
		assert.Equal(t, runs.StatusAwaitingApproval, d.Status, "the api run, another key, is left alone")
		assert.True(t, waitingFor("approval:ok")(d))
		approveGate(t, c, a2, "ok")
		approveGate(t, c, b1, "ok")
		for _, id := range []string{a2, b1} {
			d, err := c.Wait(ctx, id)
			require.NoError(t, err)
			require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
		}
	})
}

const envelopeScheduled = `
name: it-envelope-sched
schedules:
  - {id: nightly, every: 1h}
  - {every: 2h}
steps:
  - id: done
    finish: {output: {ok: true}}
`

const envelopeScheduledReordered = `
name: it-envelope-sched
schedules:
  - {every: 3h}
  - {id: nightly, every: 1h, input: {moved: true}}
steps:
  - id: done
    finish: {output: {ok: true}}
`

// schedules[].id names the Temporal schedule: it shows under that id (Client.Schedules,
// flowctl schedules), and reordering the definition's schedules keeps it (its pause too).
func TestFlowdefEnvelopeScheduleID(t *testing.T) {
	queue := uniqueQueue("flowdef-envelope-sched")
	ctx := ctxT(t, 2*time.Minute)
	nightly := "gateflow-schedule/it-envelope-sched/nightly@" + queue
	t.Cleanup(func() {
		for _, id := range []string{nightly, protocol.ScheduleID("it-envelope-sched", 0, queue), protocol.ScheduleID("it-envelope-sched", 1, queue)} {
			_ = shared.tc.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background())
		}
	})
	w := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 5 * time.Second},
		buildInterp(t, checkFlowdef(t, "sched.yaml", envelopeScheduled)))
	require.NoError(t, w.Start())
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue})
	specs := func() map[string]flowclient.ScheduleSummary {
		list, err := c.Schedules(ctx)
		require.NoError(t, err)
		out := map[string]flowclient.ScheduleSummary{}
		for _, s := range list {
			out[s.ID] = s
		}
		return out
	}
	var got map[string]flowclient.ScheduleSummary
	require.Eventually(t, func() bool { got = specs(); return len(got) == 2 }, 20*time.Second, 200*time.Millisecond)
	require.Contains(t, got, nightly)
	assert.Equal(t, "@every 1h0m0s", got[nightly].Spec)
	second := protocol.ScheduleID("it-envelope-sched", 1, queue)
	require.Contains(t, got, second, "a schedule without id is named by its position")
	assert.Equal(t, "@every 2h0m0s", got[second].Spec)

	r := run(t, queue, "schedules")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^gateflow-schedule/it-envelope-sched/nightly@\S+\s+it-envelope-sched\s+@every 1h0m0s\s+active`, r.stdout)
	r = run(t, queue, "schedules", "pause", nightly, "--note", "kept")
	require.Equal(t, 0, r.code, r.stderr)
	w.Stop()

	w2 := flow.NewWorker(shared.tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: 5 * time.Second},
		buildInterp(t, checkFlowdef(t, "sched.yaml", envelopeScheduledReordered)))
	require.NoError(t, w2.Start())
	defer w2.Stop()
	first := protocol.ScheduleID("it-envelope-sched", 0, queue)
	// The schedule list is read from visibility, which catches up with the new worker's
	// schedules a moment later.
	require.Eventually(t, func() bool { got = specs(); _, ok := got[first]; return ok }, 20*time.Second, 200*time.Millisecond,
		"the worker with the reordered definition creates %s", first)
	require.Contains(t, got, nightly)
	assert.Equal(t, "@every 1h0m0s", got[nightly].Spec, "moved to second place, nightly keeps its schedule")
	assert.True(t, got[nightly].Paused, "and its pause")
	assert.Equal(t, "kept", got[nightly].Note)
	d, err := shared.tc.ScheduleClient().GetHandle(ctx, nightly).Describe(ctx)
	require.NoError(t, err)
	a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	require.Len(t, a.Args, 1)
	var in json.RawMessage
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(a.Args[0].(*commonpb.Payload), &in))
	assert.JSONEq(t, `{"moved": true}`, string(in), "updated with its new input")
	assert.Equal(t, "@every 3h0m0s", got[first].Spec)
}

const envelopeIncident = `
name: it-envelope-incident
inputs: {type: object, properties: {severity: {type: string}, id: {type: string}}}
steps:
  - id: done
    finish: {output: {severity: "${{ inputs.severity }}", id: "${{ inputs.id }}"}}
`

const envelopeTicket = `
name: it-envelope-ticket
inputs: {type: object, properties: {ticket: {type: string}, from: {type: string}}}
triggers:
  - on: completed
    flow: it-envelope-incident
    if: "${{ output.severity == 'high' }}"
    input: {ticket: "${{ output.id }}", from: "${{ run.workflow }} ${{ outcome }}"}
steps:
  - id: done
    finish: {output: {ticket: "${{ inputs.ticket }}", from: "${{ inputs.from }}"}}
`

// A trigger's if decides at the ended run's end whether the flow starts, and its input
// maps the ended run's output onto the new run's input.
func TestFlowdefEnvelopeTriggerIfInput(t *testing.T) {
	c := flowdefWorker(t, uniqueQueue("flowdef-envelope-trigger-if"), nil,
		buildInterp(t, checkFlowdef(t, "incident.yaml", envelopeIncident)),
		buildInterp(t, checkFlowdef(t, "ticket.yaml", envelopeTicket)))
	ctx := ctxT(t, 2*time.Minute)

	low, err := c.Start(ctx, "it-envelope-incident", map[string]any{"severity": "low", "id": "INC-1"}, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, low.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	// The ended run decides before it ends: by now a start would have happened.
	_, err = c.Describe(ctx, protocol.TriggeredID("it-envelope-ticket", low.ID, low.RunID))
	var nf *flowclient.RunNotFoundError
	assert.ErrorAs(t, err, &nf, "if false: nothing started")

	high, err := c.Start(ctx, "it-envelope-incident", map[string]any{"severity": "high", "id": "INC-2"}, core.StartOptions{})
	require.NoError(t, err)
	d, err = c.Wait(ctx, high.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	id := protocol.TriggeredID("it-envelope-ticket", high.ID, high.RunID)
	td, err := c.Wait(ctx, id)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, td.Status, td.Error)
	assert.Equal(t, "trigger", td.CreatedBy)
	assert.JSONEq(t, `{"ticket": "INC-2", "from": "it-envelope-incident completed"}`, string(td.Result), "started with the mapped input")
}
