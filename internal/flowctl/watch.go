package flowctl

import (
	"github.com/gateflow/gateflow/artifacts"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/display"
)

// Watch events, the "event" field of `watch -o json` lines.
const (
	eventStepStarted  = "step_started"
	eventStepFinished = "step_finished"
	eventProgress     = "progress"
	eventOutput       = "output"
	eventWaiting      = "waiting"
	eventEnded        = "ended"
)

// watchErrorGrace is how long watch keeps polling through errors (a restarting server)
// once it has read the run.
const watchErrorGrace = 30 * time.Second

// watchChildDepth bounds how deep watch looks into running child runs.
const watchChildDepth = 4

// watchEvent is one line of `watch -o json`.
type watchEvent struct {
	Event string    `json:"event"`
	Run   string    `json:"run"`
	Time  time.Time `json:"time"`
	// Status is the run's status.
	Status runs.Status `json:"status"`
	// Step is the step that started or finished (step_started, step_finished).
	Step *watchStep `json:"step,omitempty"`
	// Output is a line a running step printed (output), from its heartbeat.
	Output *watchOutput `json:"output,omitempty"`
	// Steps counts the steps seen so far (progress, waiting, ended).
	Steps *stepCounts `json:"steps,omitempty"`
	// CostUSD is what the run spent so far (progress, waiting, ended).
	CostUSD *decimal.Decimal `json:"cost_usd,omitempty"`
	// Waiting is what the run waits for (progress, waiting), each a runs.Wait in its
	// String form: approval:GATE, input:NAME, signal:NAME[/KEY], budget, ...
	Waiting []string `json:"waiting,omitempty"`
	// Requests are what people are asked for and the commands that answer (waiting).
	Requests []watchRequest `json:"requests,omitempty"`
	// StateError says why the run's steps could not be read (progress).
	StateError string `json:"state_error,omitempty"`
	// DurationMS, Result and Error describe the ended run (ended).
	DurationMS int64           `json:"duration_ms,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// watchStep is a step in a watch event, made from its runs.Step by
// watchedStep.event. Name is its path: a parallel group's steps are GROUP/NAME, a child
// run's steps CHILDSTEP/NAME; Detail is the step's error, else its output, on one line.
type watchStep struct {
	Name           string          `json:"name"`
	Kind           runs.StepKind   `json:"kind"`
	Status         runs.StepStatus `json:"status"`
	Attempt        int             `json:"attempt"`
	RunAttempt     int             `json:"run_attempt"`
	StartedAt      time.Time       `json:"started_at"`
	EndedAt        *time.Time      `json:"ended_at,omitempty"`
	DurationMS     int64           `json:"duration_ms"`
	CostUSD        decimal.Decimal `json:"cost_usd"`
	ExitCode       *int            `json:"exit_code,omitempty"`
	HTTPStatus     int             `json:"http_status,omitempty"`
	Detail         string          `json:"detail,omitempty"`
	AllowedFailure bool            `json:"allowed_failure,omitempty"`
	OnError        bool            `json:"on_error,omitempty"`
}

// watchedStep is a step as watch follows it: its record, its path, a key that stays the
// same from one description to the next, and how long it took (or has been running).
type watchedStep struct {
	runs.Step
	path string
	key  string
	took time.Duration
	// own marks a step of the watched run itself (not of a child run): its live output is
	// in the run's description.
	own bool
}

// event is the step as watch -o json prints it.
func (s watchedStep) event() *watchStep {
	return &watchStep{
		Name: s.path, Kind: s.Kind, Status: s.Status, Attempt: s.Attempt, RunAttempt: s.RunAttempt,
		StartedAt: s.StartedAt, EndedAt: s.EndedAt, DurationMS: s.took.Milliseconds(), CostUSD: s.CostUSD,
		ExitCode: s.ExitCode, HTTPStatus: s.HTTPStatus, Detail: s.Detail(math.MaxInt), // the whole detail
		AllowedFailure: s.AllowedFailure, OnError: s.OnError,
	}
}

// watchOutput is a line a running shell step printed (artifacts.LiveLine), with the step's
// path and the attempt that printed it.
type watchOutput struct {
	Step    string `json:"step"`
	Attempt int    `json:"attempt"`
	Seq     int64  `json:"seq"`
	Stream  string `json:"stream"`
	Text    string `json:"text"`
}

type stepCounts struct {
	Done    int `json:"done"`
	Running int `json:"running"`
}

// watchRequest is something a person is asked for, and the command that answers it.
type watchRequest struct {
	What    string `json:"what"`
	Detail  string `json:"detail"`
	Command string `json:"command"`
}

func (a *app) watchCommand() *cobra.Command {
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "watch RUN [--interval 500ms]",
		Short: "Follow a run live until it ends or waits for a person",
		Long: "Follow a run: print a line when a step starts and when it finishes (name, kind,\n" +
			"status, duration, cost, detail) and a progress line when the run moves on. Steps of\n" +
			"parallel groups show as GROUP/STEP, steps of child runs as CHILDSTEP/STEP.\n\n" +
			"watch stops when the run ends (exit 0 when it completed, or completed with a\n" +
			"warning; exit 5 otherwise, as `start --wait`) or when it waits for a person: an\n" +
			"approval, an input or a budget raise (it prints what the run waits for and the\n" +
			"flowctl command that answers, and exits 0). A run waiting for a signal is watched on.\n\n" +
			"While a shell step runs, watch prints the lines it prints under it (output lines, from\n" +
			"the step's heartbeat: every second, the last 50 lines; stderr lines start with\n" +
			"\"stderr| \"); flowctl logs RUN STEP -f follows one step.\n\n" +
			"With -o json (or jsonl) it prints one JSON object per line, with \"event\" one of step_started,\n" +
			"output, step_finished, progress, waiting and ended.",
		Example: `  flowctl watch release-9669e41315
  flowctl watch ship-2.0.0 -o json | jq -c 'select(.event == "step_finished") | .step'`,
		Args:              exactArgs(1, "RUN"),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval <= 0 {
				return usageErr("--interval %s: want a positive duration, e.g. 500ms", interval)
			}
			// A stream: the watcher hands the printer each event.
			return a.run(cmd, args, nil, func(x call) (view, error) {
				w := newWatcher(a.printer(), x.c.Describe)
				w.hint = a.hint
				// Between reads, wait for the run's history to change (watch_follow.go).
				w.changes = followHistory(x.ctx, a.tc, x.args[0])
				return view{}, w.watch(x.ctx, x.args[0], interval)
			})
		},
	}
	cmd.Flags().DurationVar(&interval, "interval", 500*time.Millisecond, "how often to read the run")
	return cmd
}

// watcher follows one run by polling its description.
type watcher struct {
	p        printer
	describe func(ctx context.Context, id string) (*runs.Description, error)
	now      func() time.Time

	// hint completes the flowctl commands it suggests with the connection flags in use.
	hint func(string) string
	// changes, when set, tells of new events in the run's history: while no step runs,
	// watch reads the run again only then (watch_follow.go).
	changes <-chan struct{}

	started bool
	seen    map[string]runs.StepStatus // by step key: running, or how it ended
	lines   map[string]liveMark        // by step key: the last live line printed
	last    string                     // the progress last printed
}

func newWatcher(p printer, describe func(context.Context, string) (*runs.Description, error)) *watcher {
	return &watcher{p: p, describe: describe, now: time.Now, seen: map[string]runs.StepStatus{},
		lines: map[string]liveMark{}, hint: func(s string) string { return s }}
}

// liveMark is the attempt and sequence number of the last live line watch printed of a step.
type liveMark struct {
	attempt int
	seq     int64
}

// watch polls the run every interval until it ends or waits for a person.
func (w *watcher) watch(ctx context.Context, id string, interval time.Duration) error {
	return pollRunWaiting(ctx, "watch "+id, w.now,
		func() (*runs.Description, error) { return w.describe(ctx, id) },
		func(d *runs.Description) (bool, error) { return w.update(ctx, d, interval) },
		func() <-chan time.Time { return w.next(interval) })
}

// pollRun describes a run every interval and hands each description to update until it
// says done or fails. Errors describing the run are retried for watchErrorGrace after the
// last success (the server may be restarting), except an unknown run; none was ever read
// is an error at once. what names the command in a cancellation error.
func pollRun(ctx context.Context, what string, interval time.Duration, now func() time.Time,
	describe func() (*runs.Description, error), update func(*runs.Description) (bool, error)) error {
	return pollRunWaiting(ctx, what, now, describe, update, func() <-chan time.Time { return time.After(interval) })
}

// pollRunWaiting is pollRun that waits for next between reads.
func pollRunWaiting(ctx context.Context, what string, now func() time.Time,
	describe func() (*runs.Description, error), update func(*runs.Description) (bool, error), next func() <-chan time.Time) error {
	var lastOK time.Time
	for {
		d, err := describe()
		switch {
		case err == nil:
			lastOK = now()
			done, err := update(d)
			if done || err != nil {
				return err
			}
		case ctx.Err() != nil:
			return err
		case lastOK.IsZero() || now().Sub(lastOK) > watchErrorGrace:
			return err
		default:
			var nf *flowclient.RunNotFoundError
			if errors.As(err, &nf) {
				return err
			}
			// Keep polling through errors for a while: the server may be restarting.
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-next():
		}
	}
}

// update prints what changed since the last description and reports whether watching is
// over; the error carries exit code 5 for a run that ended without completing.
func (w *watcher) update(ctx context.Context, d *runs.Description, interval time.Duration) (bool, error) {
	if !w.started {
		w.started = true
		w.p.note("Watching %s run %s (%s), every %s.\n", d.Workflow, d.ID, d.Status, interval)
	}
	st := d.State
	var steps []watchedStep
	if st != nil {
		steps = w.flatten(ctx, st.Steps, "", "", 0)
	}
	counts := stepCounts{}
	for _, s := range steps {
		prev, ok := w.seen[s.key]
		if !ok {
			w.emitStep(d, eventStepStarted, s)
		}
		if s.Status == runs.StepWaitingService && prev != s.Status {
			w.emitServiceWait(d, s) // services.go
		}
		if !stepGoing(s.Status) && (!ok || stepGoing(prev)) {
			w.emitStep(d, eventStepFinished, s)
		}
		w.seen[s.key] = s.Status
		if stepGoing(s.Status) {
			if live, ok := d.Live[s.ActivityID]; ok && s.own && s.Status == runs.StepRunning {
				w.emitOutput(d, s, live)
			}
			counts.Running++
		} else {
			counts.Done++
		}
	}

	if d.Status.Terminal() {
		w.emitEnded(d, counts)
		if d.Status != runs.StatusCompleted && d.Status != runs.StatusWarning {
			return true, &exitError{code: ExitRunFailed, err: fmt.Errorf("run %s ended %s", d.ID, d.Status)}
		}
		return true, nil
	}
	if st != nil {
		if reqs := personRequests(d.ID, st, w.hint); len(reqs) > 0 {
			w.emitWaiting(d, counts, reqs)
			return true, nil
		}
	}
	w.emitProgress(d, counts)
	return false, nil
}

// flatten lists the steps in order, with the steps of child runs after their step.
func (w *watcher) flatten(ctx context.Context, steps []runs.Step, prefix, keyPrefix string, depth int) []watchedStep {
	var out []watchedStep
	now := w.now()
	for _, s := range steps {
		ws := watchedStep{Step: s, path: prefix + s.Label(),
			key: fmt.Sprintf("%s%s/%s@%d", keyPrefix, s.Group, s.ActivityID, s.RunAttempt), own: depth == 0}
		ms := s.Duration(now).Milliseconds()
		if s.EndedAt != nil {
			ms = s.DurationMS
		}
		ws.took = time.Duration(ms) * time.Millisecond
		out = append(out, ws)
		if s.Child == nil || depth >= watchChildDepth {
			continue
		}
		childSteps := s.Child.Steps
		if len(childSteps) == 0 && s.Status == runs.StepRunning && s.Child.ID != "" {
			// The child reports its steps to the parent when it ends; read them live.
			if cd, err := w.describe(ctx, s.Child.ID); err == nil && cd.State != nil {
				childSteps = cd.State.Steps
			}
		}
		out = append(out, w.flatten(ctx, childSteps, ws.path+"/", ws.key+">", depth+1)...)
	}
	return out
}

// personRequests lists what the run waits for from people (approvals, inputs, a budget
// raise), with the commands that answer. Signals are not listed: systems send them.
func personRequests(id string, st *runs.State, hint func(string) string) []watchRequest {
	var out []watchRequest
	for _, what := range st.Waiting {
		wait, err := runs.ParseWait(what)
		if err != nil {
			continue
		}
		var detail string
		switch wait.Kind {
		case runs.ForApproval:
			detail = "approval " + wait.Name
			for _, g := range st.Gates {
				if g.Name != wait.Name || g.Closed() {
					continue
				}
				detail = fmt.Sprintf("approval %s: %s (%d of %d from %s, %s)", wait.Name,
					display.Preview(display.OneLine(g.Request.Message), 80), len(g.Approvals()), g.Request.Required,
					anyoneIfNone(g.Request.Approvers), gateDeadline(g))
			}
		case runs.ForInput:
			detail = "input " + wait.Name
			for _, in := range st.Inputs {
				if in.Name != wait.Name || in.Answer != nil {
					continue
				}
				detail = fmt.Sprintf("input %s: %s (from %s)", wait.Name, display.Preview(display.OneLine(in.Request.Prompt), 80),
					anyoneIfNone(in.Request.Assignees))
			}
		case runs.ForBudget:
			detail = "budget paused: " + budgetLine(st)
		default:
			continue
		}
		out = append(out, watchRequest{What: what, Detail: detail, Command: hint(wait.Command(id))})
	}
	return out
}

func (w *watcher) emitStep(d *runs.Description, event string, s watchedStep) {
	at := s.StartedAt
	if event == eventStepFinished && s.EndedAt != nil {
		at = *s.EndedAt
	}
	w.p.event(watchEvent{Event: event, Run: d.ID, Time: at, Status: d.Status, Step: s.event()}, func(out io.Writer) {
		if event == eventStepStarted {
			fmt.Fprintf(out, "%s  started   %-16s %s\n", clock(at), s.path, s.Kind)
			return
		}
		line := fmt.Sprintf("%s  finished  %-16s %-8s %-10s %-7s %-7s %s", clock(at), s.path, s.Kind, s.StatusText(),
			fmtDuration(s.took), s.CostText(), s.Detail(60))
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	})
}

// emitOutput prints the live lines of a running step not printed yet.
func (w *watcher) emitOutput(d *runs.Description, s watchedStep, live artifacts.LiveOutput) {
	mark := w.lines[s.key]
	if mark.attempt != live.Attempt {
		mark = liveMark{attempt: live.Attempt}
	}
	for _, line := range live.Lines {
		if line.Seq <= mark.seq {
			continue
		}
		mark.seq = line.Seq
		w.p.event(watchEvent{Event: eventOutput, Run: d.ID, Time: live.At, Status: d.Status, Output: &watchOutput{
			Step: s.path, Attempt: live.Attempt, Seq: line.Seq, Stream: line.Stream, Text: line.Text}},
			func(out io.Writer) {
				fmt.Fprintf(out, "%s  output    %-16s %s\n", clock(live.At), s.path, liveText(line))
			})
	}
	w.lines[s.key] = mark
}

func (w *watcher) emitProgress(d *runs.Description, counts stepCounts) {
	var cost decimal.Decimal
	var waiting []string
	stateErr := ""
	if d.State != nil {
		cost, waiting = d.State.CostUSD, d.State.Waiting
	} else {
		stateErr = d.StateError
	}
	line := fmt.Sprintf("%s, %d step(s) done, %d running, cost $%s", d.Status, counts.Done, counts.Running, cost.StringFixed(4))
	if len(waiting) > 0 {
		line += ", waiting for " + strings.Join(waiting, ", ")
	}
	if stateErr != "" {
		line += ", steps unavailable: " + display.OneLine(stateErr)
	}
	if line == w.last {
		return
	}
	w.last = line
	w.p.event(watchEvent{Event: eventProgress, Run: d.ID, Time: w.now(), Status: d.Status, Steps: &counts,
		CostUSD: &cost, Waiting: waiting, StateError: stateErr},
		func(out io.Writer) { fmt.Fprintf(out, "%s  progress  %s\n", clock(w.now()), line) })
}

func (w *watcher) emitWaiting(d *runs.Description, counts stepCounts, reqs []watchRequest) {
	cost := d.State.CostUSD
	w.p.event(watchEvent{Event: eventWaiting, Run: d.ID, Time: w.now(), Status: d.Status, Steps: &counts,
		CostUSD: &cost, Waiting: d.State.Waiting, Requests: reqs}, func(out io.Writer) {
		fmt.Fprintf(out, "%s  waiting   %s (%s)\n", clock(w.now()), strings.Join(d.State.Waiting, ", "), d.Status)
		for _, r := range reqs {
			fmt.Fprintf(out, "  %s\n    %s\n", r.Detail, r.Command)
		}
	})
}

func (w *watcher) emitEnded(d *runs.Description, counts stepCounts) {
	at := w.now()
	var took time.Duration
	if d.CloseTime != nil {
		at = *d.CloseTime
		took = d.CloseTime.Sub(d.StartTime)
	}
	var cost decimal.Decimal
	if d.State != nil {
		cost = d.State.CostUSD
	}
	e := watchEvent{Event: eventEnded, Run: d.ID, Time: at, Status: d.Status, Steps: &counts, CostUSD: &cost,
		DurationMS: took.Milliseconds(), Error: d.Error}
	if len(d.Result) > 0 && string(d.Result) != "null" {
		e.Result = d.Result
	}
	w.p.event(e, func(out io.Writer) {
		fmt.Fprintf(out, "%s  ended     %s after %s, %d step(s), cost $%s\n", clock(at), d.Status, fmtDuration(took),
			counts.Done+counts.Running, cost.StringFixed(4))
		if e.Result != nil {
			fmt.Fprintf(out, "  result %s\n", display.Preview(string(d.Result), 400))
		}
		if d.Error != "" {
			fmt.Fprintf(out, "  error  %s\n", display.OneLine(d.Error))
		}
	})
}

// clock is a time of day for watch lines.
func clock(t time.Time) string {
	if t.IsZero() {
		return "--:--:--"
	}
	return t.Local().Format("15:04:05")
}
