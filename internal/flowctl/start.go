package flowctl

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/flowdef/interp"
)

// startFlags are the flags of flowctl start.
type startFlags struct {
	input, id, createdBy, maxCost, policy, key, startAt, concKey, file string
	pause, delay                                                       time.Duration
	labels, tags, limits                                               []string
	priority, attempts                                                 int
	wait, onceAgain                                                    bool
}

func (a *app) startCommand() *cobra.Command {
	var f startFlags
	cmd := &cobra.Command{
		Use:   "start (WORKFLOW | --file FLOW.yaml) [--input JSON|@file] [--id ID] [--wait]",
		Short: "Start a run of a workflow",
		Long: "Start a run of a workflow served on the task queue. The input is JSON given\n" +
			"inline, or read from a file with @path (@- reads standard input). It is checked\n" +
			"against the workflow's input type before anything starts.\n\n" +
			"With --file, the run is of a declarative definition (YAML or JSON) that no worker\n" +
			"needs to have loaded: the file is validated here against the registries the task\n" +
			"queue's workers publish (as flowctl validate does; a call: to another definition is\n" +
			"resolved from the file's directory), then run by the workers' generic definition\n" +
			"flow (" + interp.DefinitionFlowName + "), the definition's content in its input. The run\n" +
			"ID defaults to the definition's name and a random suffix.",
		Example: `  flowctl start hello --input '{"name":"Ada"}' --wait
  flowctl start hello --input @input.json --id hello-ada
  flowctl start --file flows/review.yaml --input '{"repo":"gateflow"}' --wait`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.file != "" {
				if len(args) > 0 {
					return usageErr("start --file takes no WORKFLOW argument (got %s)", strings.Join(args, " "))
				}
				return nil
			}
			return exactArgs(1, "WORKFLOW")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.checkOnceAgain(cmd); err != nil {
				return err
			}
			raw, err := a.readInput(f.input)
			if err != nil {
				return err
			}
			return a.run(cmd, args, &f.createdBy, func(x call) (view, error) { return a.start(x, &f, raw) })
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// register declares the flags of start.
func (f *startFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.file, "file", "f", "", "start a run of this declarative definition file (YAML or JSON), validated first")
	fs.StringVarP(&f.input, "input", "i", "", "input as JSON, or @file (@- for standard input)")
	fs.StringVar(&f.id, "id", "", "run ID (default: the workflow name and a random suffix)")
	fs.StringVar(&f.createdBy, "as", "", "who starts the run (default: FLOW_USER, else the OS user)")
	fs.BoolVarP(&f.wait, "wait", "w", false, "wait for the run to end and show it")
	fs.BoolVar(&f.onceAgain, "once-again", false, "start the workflow's once start (flow.Once) again, after its last run ended")
	fs.StringVarP(&f.key, "idempotency-key", "k", "", "start at most one run per key: a repeat returns the existing run")
	fs.StringArrayVarP(&f.labels, "label", "l", nil, "a label key=value (repeatable)")
	fs.IntVar(&f.priority, "priority", 0, "priority from 1 (highest) to 5 (lowest); default 3")
	fs.StringVar(&f.concKey, "concurrency-key", "", "exclusive key: refused while another live run holds it")
	fs.StringArrayVar(&f.limits, "limit", nil, "a concurrency limit GROUP=N: wait in pending for one of N permits (repeatable)")
	fs.StringArrayVarP(&f.tags, "tag", "t", nil, "a worker tag the run needs (repeatable): only workers with all of them take it")
	fs.DurationVar(&f.delay, "delay", 0, "hold the run in pending this long")
	fs.StringVar(&f.startAt, "start-at", "", "hold the run in pending until this RFC 3339 time")
	fs.IntVar(&f.attempts, "max-attempts", 0, "run attempts (overrides the workflow's)")
	fs.StringVar(&f.maxCost, "max-cost", "", "the run's money cap in USD (default: the workflow's, else the worker's)")
	fs.StringVar(&f.policy, "budget-policy", "", "when the cap would be exceeded: stop (default) or pause")
	fs.DurationVar(&f.pause, "budget-pause", 0, "with --budget-policy pause: how long to wait for a raise (default 24h)")
}

// checkOnceAgain refuses flags given with --once-again, which starts the once start as it
// was declared.
func (f *startFlags) checkOnceAgain(cmd *cobra.Command) error {
	if !f.onceAgain {
		return nil
	}
	var others []string
	cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) {
		if fl.Changed && fl.Name != "once-again" && fl.Name != "wait" {
			others = append(others, "--"+fl.Name)
		}
	})
	if len(others) > 0 {
		return usageErr("--once-again starts the workflow's once start as it was declared: %s cannot be given with it", strings.Join(others, ", "))
	}
	return nil
}

// options are the start options the flags ask for, the run created by createdBy.
func (f *startFlags) options(createdBy string) (core.StartOptions, error) {
	so := core.StartOptions{ID: f.id, CreatedBy: createdBy, BudgetPause: f.pause, IdempotencyKey: f.key,
		Priority: f.priority, Delay: f.delay, MaxAttempts: f.attempts, WorkerTags: f.tags, ConcurrencyKey: f.concKey}
	for _, l := range f.limits {
		g, n, ok := strings.Cut(l, "=")
		v, err := strconv.Atoi(n)
		if !ok || err != nil {
			return so, usageErr("--limit %q: want GROUP=N", l)
		}
		if so.ConcurrencyLimits == nil {
			so.ConcurrencyLimits = map[string]int{}
		}
		so.ConcurrencyLimits[g] = v
	}
	if len(f.labels) > 0 {
		l, err := parseLabels(f.labels)
		if err != nil {
			return so, usageErr("--label: %v", err)
		}
		so.Labels = l
	}
	if f.startAt != "" {
		t, err := time.Parse(time.RFC3339, f.startAt)
		if err != nil {
			return so, usageErr("--start-at %q: want an RFC 3339 time, e.g. 2026-12-01T09:00:00Z", f.startAt)
		}
		so.StartAt = t
	}
	if f.maxCost != "" {
		d, err := budget.ParseUSD(f.maxCost)
		if err != nil {
			return so, usageErr("--max-cost: %v", err)
		}
		so.MaxCostUSD = &d
	}
	if f.policy != "" {
		p, err := budget.ParsePolicy(f.policy)
		if err != nil {
			return so, usageErr("--budget-policy: %v", err)
		}
		so.BudgetPolicy = p
	}
	return so, nil
}

// start starts the run the flags ask for and, with --wait, waits for it to end: its view
// then fails with exit 5 when the run did not complete.
func (a *app) start(x call, f *startFlags, raw json.RawMessage) (view, error) {
	so, err := f.options(x.by)
	if err != nil {
		return view{}, err
	}
	var run *core.Run
	switch {
	case f.file != "" && f.onceAgain:
		return view{}, usageErr("--once-again cannot be given with --file")
	case f.file != "":
		run, err = a.startFile(x.ctx, x.c, f.file, raw, so)
	case f.onceAgain:
		run, err = x.c.RestartOnce(x.ctx, x.args[0])
	default:
		run, err = x.c.Start(x.ctx, x.args[0], raw, so)
	}
	if err != nil {
		return view{}, err
	}
	if !f.wait {
		return view{value: run, text: func(w io.Writer) error { return writeStarted(w, run) }}, nil
	}
	a.printer().note("Started %s run %s, waiting for it to end...\n\n", run.Workflow, run.ID)
	d, err := x.c.Wait(x.ctx, run.ID)
	if err != nil {
		return view{}, err
	}
	v := a.runView(x.ctx, d)
	if d.Status != runs.StatusCompleted && d.Status != runs.StatusWarning {
		v.err = &exitError{code: ExitRunFailed, err: fmt.Errorf("run %s ended %s", d.ID, d.Status)}
	}
	return v, nil
}

// writeStarted says a run started (or was found), for people.
func writeStarted(w io.Writer, run *core.Run) error {
	verb := "Started"
	if run.Existing {
		verb = "Found the existing"
	}
	fmt.Fprintf(w, "%s %s run %s\n", verb, run.Workflow, run.ID)
	if run.Held {
		fmt.Fprintf(w, "  pending: workflow type %s is paused; the run starts when it is resumed (flowctl resume %s)\n", run.Workflow, run.Workflow)
	}
	_, err := fmt.Fprintf(w, "  flowctl show %s\n", run.ID)
	return err
}

// readInput resolves --input: inline JSON, @file or @- (standard input), checked to be
// JSON.
func (a *app) readInput(input string) (json.RawMessage, error) {
	if input == "" {
		return nil, nil
	}
	return a.readJSON("--input", input)
}

// readJSON resolves a JSON flag value: inline, @file or @- (standard input).
func (a *app) readJSON(flag, input string) (json.RawMessage, error) {
	var raw []byte
	switch {
	case input == "":
		return nil, usageErr("%s is empty", flag)
	case input == "@-":
		b, err := io.ReadAll(a.stdin)
		if err != nil {
			return nil, usageErr("read %s from standard input: %v", strings.TrimPrefix(flag, "--"), err)
		}
		raw = b
	case strings.HasPrefix(input, "@"):
		b, err := os.ReadFile(input[1:])
		if err != nil {
			return nil, usageErr("read %s file: %v", strings.TrimPrefix(flag, "--"), err)
		}
		raw = b
	default:
		raw = []byte(input)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, usageErr("%s is not valid JSON: %v", flag, err)
	}
	return raw, nil
}

// exactArgs is cobra.ExactArgs with a message that names the missing argument.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s needs %s (got %d arguments); see flowctl %s --help", cmd.Name(), names, len(args), cmd.Name())
		}
		return nil
	}
}

// parseLabels reads "k=v" pairs (flowctl --label) into a map; a key given twice is an
// error.
func parseLabels(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("label %q: want key=value", p)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("label %s given twice", k)
		}
		out[k] = v
	}
	return out, nil
}
