package flowctl

import (
	"github.com/gateflow/gateflow/artifacts"

	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/internal/display"
)

// Logs events, the "event" field of `logs -o json` lines.
const (
	logsEventLine     = "line"
	logsEventProgress = "progress"
	logsEventEnded    = "ended"
)

// logsEvent is one line of `logs -o json`.
type logsEvent struct {
	Event string `json:"event"`
	Run   string `json:"run"`
	// Step is the step's ID in the run (StepRecord.ActivityID).
	Step string `json:"step"`
	// Attempt, Seq, Stream and Text are a live output line (line); Progress what a step
	// without lines does (progress); both from the step's heartbeat (artifacts.LiveOutput).
	Attempt  int    `json:"attempt,omitempty"`
	Seq      int64  `json:"seq,omitempty"`
	Stream   string `json:"stream,omitempty"`
	Text     string `json:"text,omitempty"`
	Progress string `json:"progress,omitempty"`
	// Status, ExitCode, HTTPStatus, DurationMS, Output and Error describe the step once it
	// ended (ended); Output is its final output.
	Status     runs.StepStatus `json:"status,omitempty"`
	ExitCode   *int            `json:"exit_code,omitempty"`
	HTTPStatus int             `json:"http_status,omitempty"`
	DurationMS int64           `json:"duration_ms,omitempty"`
	Output     string          `json:"output,omitempty"`
	Error      string          `json:"error,omitempty"`
}

func (a *app) logsCommand() *cobra.Command {
	var follow bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "logs RUN STEP [-f] [--interval 500ms]",
		Short: "Print a step's output, following it live while it runs",
		Long: "Print one step's output. STEP is the step's ID in the run (its name, name#N for a\n" +
			"later use of the name) or its name as show lists it (GROUP/NAME); a name used more\n" +
			"than once means its latest step. A step of a child run is CHILD/STEP, CHILD the\n" +
			"child step's name (or give the child run's ID as RUN).\n\n" +
			"While the step runs, logs prints the last lines it printed (a shell step heartbeats the\n" +
			"tail of its stdout and stderr every second; stderr lines start with \"stderr| \") or\n" +
			"what it is doing (an agent step's progress). Once it has ended, logs prints its final\n" +
			"output: what a completed shell, HTTP or agent step returned (a shell step's stdout, then\n" +
			"its stderr lines; read from the blob store of --blob-url when the workers keep it\n" +
			"there), else the step record's output preview, and the step's error.\n\n" +
			"With -f it follows the step: it waits for the step to start, prints each new line\n" +
			"once, and when the step ends prints its final output. Without -f it prints what there\n" +
			"is now.\n\n" +
			"logs exits 0 for a running step (without -f) and a step that ended completed, skipped\n" +
			"or allowed to fail; 5 for a step that failed, timed out, was cancelled or refused; 3\n" +
			"when the run has no such step (with -f: once the run has ended).\n\n" +
			"With -o json (or jsonl) it prints one JSON object per line, with \"event\" one of line, progress\n" +
			"and ended.",
		Example: `  flowctl logs release-9669e41315 build -f
  flowctl logs release-9669e41315 build -o json | jq -r 'select(.event == "line") | .text'`,
		Args:              exactArgs(2, "RUN STEP"),
		ValidArgsFunction: a.completeRunSteps,
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval <= 0 {
				return usageErr("--interval %s: want a positive duration, e.g. 500ms", interval)
			}
			if strings.TrimSpace(args[1]) == "" {
				return usageErr("STEP is empty: name a step of the run (flowctl show %s lists them)", args[0])
			}
			// A stream: the logger hands the printer each event.
			return a.run(cmd, args, nil, func(x call) (view, error) {
				l := newStepLogger(a.printer(), x.c.Describe)
				l.final = historyOutput(x.c.Temporal(), a.payloads)
				return view{}, l.logs(x.ctx, x.args[0], x.args[1], follow, interval)
			})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the step until it ends")
	cmd.Flags().DurationVar(&interval, "interval", 500*time.Millisecond, "how often to read the run with -f")
	return cmd
}

// completeRunSteps completes RUN with the recent runs, then STEP with the run's steps.
func (a *app) completeRunSteps(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return a.completeRuns(cmd, args, toComplete)
	}
	a.timeout = min(a.timeout, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := a.client(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	d, err := c.Describe(ctx, args[0])
	if err != nil || d.State == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range d.State.Steps {
		if l := s.Label(); !seen[l] && strings.HasPrefix(l, toComplete) {
			seen[l] = true
			out = append(out, l+"\t"+string(s.Kind)+" "+string(s.Status))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// stepLogger prints one step's output by polling its run's description.
type stepLogger struct {
	p        printer
	describe func(ctx context.Context, id string) (*runs.Description, error)
	// final is the step's final output once it has ended: the record's output preview
	// (recordOutput), or what the step's activity returned (historyOutput, through the blob
	// store when the workers offloaded it).
	final func(ctx context.Context, d *runs.Description, s runs.Step) (string, error)

	attempt  int   // the attempt whose lines were printed
	seq      int64 // the last line printed of that attempt
	progress string
}

func newStepLogger(p printer, describe func(context.Context, string) (*runs.Description, error)) *stepLogger {
	return &stepLogger{p: p, describe: describe, final: recordOutput}
}

// recordOutput is the final output the step record holds: its output preview.
func recordOutput(_ context.Context, _ *runs.Description, s runs.Step) (string, error) {
	return s.Output, nil
}

// logs prints the step's output, once or (follow) until the step ends. A step of a child
// run is CHILD/STEP, CHILD the child step's name in run (childStep).
func (l *stepLogger) logs(ctx context.Context, run, step string, follow bool, interval time.Duration) error {
	return pollRun(ctx, "logs "+run+" "+step, interval, time.Now,
		func() (*runs.Description, error) { return l.describe(ctx, run) },
		func(d *runs.Description) (bool, error) {
			if child, rest, ok := childStep(d, step); ok {
				run, step = child, rest // follow the step in the child run from now on
				return false, nil
			}
			return l.update(ctx, d, step, follow)
		})
}

// childStep finds a step of a child run addressed as CHILD/STEP (CHILD/GROUP/NAME, or
// deeper: CHILD/GRANDCHILD/STEP): when the run has no step of that name itself, CHILD is
// its latest child step of that label or name whose child run started, and the result is
// that run's ID and the rest of the address.
func childStep(d *runs.Description, step string) (run, rest string, ok bool) {
	if d.State == nil {
		return "", "", false
	}
	if _, found := findStep(d.State.Steps, step); found {
		return "", "", false
	}
	for i := strings.Index(step, "/"); i > 0 && i < len(step)-1; {
		prefix, after := step[:i], step[i+1:]
		for j := len(d.State.Steps) - 1; j >= 0; j-- {
			s := d.State.Steps[j]
			if s.Kind == runs.KindChild && s.Child != nil && s.Child.ID != "" && (s.Label() == prefix || s.Name == prefix) {
				return s.Child.ID, after, true
			}
		}
		next := strings.Index(after, "/")
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return "", "", false
}

// update prints what is new in one description and reports whether logs is done.
func (l *stepLogger) update(ctx context.Context, d *runs.Description, step string, follow bool) (bool, error) {
	if d.State == nil {
		// The steps cannot be read now (a busy worker did not answer the query); the live
		// output of a step named by its ID still can.
		if live, ok := d.Live[step]; ok {
			l.printLive(d.ID, step, live)
			return !follow, nil
		}
		if !follow || d.Status.Terminal() {
			return true, fmt.Errorf("logs %s: the run's steps cannot be read: %s", d.ID, orDash(d.StateError))
		}
		return false, nil
	}
	rec, ok := findStep(d.State.Steps, step)
	if !ok {
		if follow && !d.Status.Terminal() {
			return false, nil // it may not have started yet
		}
		return true, &exitError{code: ExitNotFound, err: fmt.Errorf("run %s has no step %s (flowctl show %s lists its steps)", d.ID, step, d.ID)}
	}
	if rec.Status == runs.StepRunning {
		if live, ok := d.Live[rec.ActivityID]; ok {
			l.printLive(d.ID, rec.ActivityID, live)
		}
		return !follow, nil
	}
	return true, l.printEnded(ctx, d, rec)
}

// findStep is the latest step with that label or name, else the step with that activity ID
// (name#N).
func findStep(steps []runs.Step, step string) (runs.Step, bool) {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Label() == step || steps[i].Name == step {
			return steps[i], true
		}
	}
	for _, s := range steps {
		if s.ActivityID == step {
			return s, true
		}
	}
	return runs.Step{}, false
}

// printLive prints the lines of live not printed yet, and a progress that changed.
func (l *stepLogger) printLive(run, step string, live artifacts.LiveOutput) {
	if live.Attempt != l.attempt {
		if l.attempt != 0 {
			l.p.note("--- attempt %d\n", live.Attempt)
		}
		l.attempt, l.seq, l.progress = live.Attempt, 0, ""
	}
	for _, line := range live.Lines {
		if line.Seq <= l.seq {
			continue
		}
		l.seq = line.Seq
		l.p.event(logsEvent{Event: logsEventLine, Run: run, Step: step, Attempt: live.Attempt, Seq: line.Seq,
			Stream: line.Stream, Text: line.Text}, func(out io.Writer) { fmt.Fprintln(out, liveText(line)) })
	}
	if live.Progress != "" && live.Progress != l.progress {
		l.progress = live.Progress
		l.p.event(logsEvent{Event: logsEventProgress, Run: run, Step: step, Attempt: live.Attempt, Progress: live.Progress},
			func(out io.Writer) { fmt.Fprintf(out, "... %s\n", live.Progress) })
	}
}

// liveText is a live line as the table output prints it: stderr lines marked.
func liveText(line artifacts.LiveLine) string {
	if line.Stream == "stderr" {
		return "stderr| " + line.Text
	}
	return line.Text
}

// printEnded prints the ended step's outcome and final output; the error carries exit
// code 5 for a step that did not complete.
func (l *stepLogger) printEnded(ctx context.Context, d *runs.Description, s runs.Step) error {
	out, err := l.final(ctx, d, s)
	if err != nil {
		return fmt.Errorf("logs %s %s: read the final output: %w", d.ID, s.ActivityID, err)
	}
	l.p.event(logsEvent{Event: logsEventEnded, Run: d.ID, Step: s.ActivityID, Attempt: s.Attempt, Status: s.Status,
		ExitCode: s.ExitCode, HTTPStatus: s.HTTPStatus, DurationMS: s.DurationMS, Output: out, Error: s.Error}, func(w io.Writer) {
		fmt.Fprintf(w, "--- %s %s %s after %s (attempt %d, code %s)\n", s.Label(), s.Kind, s.StatusText(),
			fmtDuration(time.Duration(s.DurationMS)*time.Millisecond), s.Attempt, s.CodeText())
		if out != "" {
			fmt.Fprintln(w, strings.TrimRight(out, "\n"))
		}
		if s.Error != "" {
			fmt.Fprintf(w, "error: %s\n", display.OneLine(s.Error))
		}
	})
	switch s.Status {
	case runs.StepCompleted, runs.StepSkipped, runs.StepPlanned:
		return nil
	}
	if !s.AllowedFailure {
		return &exitError{code: ExitRunFailed, err: fmt.Errorf("step %s of run %s ended %s", s.ActivityID, d.ID, s.Status)}
	}
	return nil
}
