package flowctl

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowdef/interp"
)

func (a *app) startCommand() *cobra.Command {
	var input, id, createdBy, maxCost, policy, key, startAt string
	var pause, delay time.Duration
	var labels, tags, limits []string
	var concKey string
	var priority, attempts int
	var wait, onceAgain bool
	var file string
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
			if file != "" {
				if len(args) > 0 {
					return usageErr("start --file takes no WORKFLOW argument (got %s)", strings.Join(args, " "))
				}
				return nil
			}
			return exactArgs(1, "WORKFLOW")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if onceAgain {
				var others []string
				cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
					if f.Changed && f.Name != "once-again" && f.Name != "wait" {
						others = append(others, "--"+f.Name)
					}
				})
				if len(others) > 0 {
					return usageErr("--once-again starts the workflow's once start as it was declared: %s cannot be given with it", strings.Join(others, ", "))
				}
			}
			raw, err := a.readInput(input)
			if err != nil {
				return err
			}
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			if createdBy, err = a.who(createdBy); err != nil {
				return err
			}
			so := core.StartOptions{ID: id, CreatedBy: createdBy, BudgetPause: pause, IdempotencyKey: key,
				Priority: priority, Delay: delay, MaxAttempts: attempts, WorkerTags: tags, ConcurrencyKey: concKey}
			for _, l := range limits {
				g, n, ok := strings.Cut(l, "=")
				v, err := strconv.Atoi(n)
				if !ok || err != nil {
					return usageErr("--limit %q: want GROUP=N", l)
				}
				if so.ConcurrencyLimits == nil {
					so.ConcurrencyLimits = map[string]int{}
				}
				so.ConcurrencyLimits[g] = v
			}
			if len(labels) > 0 {
				l, err := parseLabels(labels)
				if err != nil {
					return usageErr("--label: %v", err)
				}
				so.Labels = l
			}
			if startAt != "" {
				t, err := time.Parse(time.RFC3339, startAt)
				if err != nil {
					return usageErr("--start-at %q: want an RFC 3339 time, e.g. 2026-12-01T09:00:00Z", startAt)
				}
				so.StartAt = t
			}
			if maxCost != "" {
				d, err := budget.ParseUSD(maxCost)
				if err != nil {
					return usageErr("--max-cost: %v", err)
				}
				so.MaxCostUSD = &d
			}
			if policy != "" {
				p, err := budget.ParsePolicy(policy)
				if err != nil {
					return usageErr("--budget-policy: %v", err)
				}
				so.BudgetPolicy = p
			}
			var run *core.Run
			switch {
			case file != "" && onceAgain:
				return usageErr("--once-again cannot be given with --file")
			case file != "":
				run, err = a.startFile(cmd.Context(), c, file, raw, so)
			case onceAgain:
				run, err = c.RestartOnce(cmd.Context(), args[0])
			default:
				run, err = c.Start(cmd.Context(), args[0], raw, so)
			}
			if err != nil {
				return err
			}
			if !wait {
				if a.output == "json" {
					return printJSON(a.stdout, run)
				}
				verb := "Started"
				if run.Existing {
					verb = "Found the existing"
				}
				fmt.Fprintf(a.stdout, "%s %s run %s\n", verb, run.Workflow, run.ID)
				if run.Held {
					fmt.Fprintf(a.stdout, "  pending: workflow type %s is paused; the run starts when it is resumed (flowctl resume %s)\n", run.Workflow, run.Workflow)
				}
				fmt.Fprintf(a.stdout, "  flowctl show %s\n", run.ID)
				return nil
			}
			if a.output != "json" {
				fmt.Fprintf(a.stdout, "Started %s run %s, waiting for it to end...\n\n", run.Workflow, run.ID)
			}
			d, err := c.Wait(cmd.Context(), run.ID)
			if err != nil {
				return err
			}
			if err := a.printRun(cmd.Context(), d); err != nil {
				return err
			}
			if d.Status != runs.StatusCompleted && d.Status != runs.StatusWarning {
				return &exitError{code: ExitRunFailed, err: fmt.Errorf("run %s ended %s", d.ID, d.Status)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", "start a run of this declarative definition file (YAML or JSON), validated first")
	f.StringVarP(&input, "input", "i", "", "input as JSON, or @file (@- for standard input)")
	f.StringVar(&id, "id", "", "run ID (default: the workflow name and a random suffix)")
	f.StringVar(&createdBy, "as", "", "who starts the run (default: FLOW_USER, else the OS user)")
	f.BoolVarP(&wait, "wait", "w", false, "wait for the run to end and show it")
	f.BoolVar(&onceAgain, "once-again", false, "start the workflow's once start (flow.Once) again, after its last run ended")
	f.StringVarP(&key, "idempotency-key", "k", "", "start at most one run per key: a repeat returns the existing run")
	f.StringArrayVarP(&labels, "label", "l", nil, "a label key=value (repeatable)")
	f.IntVar(&priority, "priority", 0, "priority from 1 (highest) to 5 (lowest); default 3")
	f.StringVar(&concKey, "concurrency-key", "", "exclusive key: refused while another live run holds it")
	f.StringArrayVar(&limits, "limit", nil, "a concurrency limit GROUP=N: wait in pending for one of N permits (repeatable)")
	f.StringArrayVarP(&tags, "tag", "t", nil, "a worker tag the run needs (repeatable): only workers with all of them take it")
	f.DurationVar(&delay, "delay", 0, "hold the run in pending this long")
	f.StringVar(&startAt, "start-at", "", "hold the run in pending until this RFC 3339 time")
	f.IntVar(&attempts, "max-attempts", 0, "run attempts (overrides the workflow's)")
	f.StringVar(&maxCost, "max-cost", "", "the run's money cap in USD (default: the workflow's, else the worker's)")
	f.StringVar(&policy, "budget-policy", "", "when the cap would be exceeded: stop (default) or pause")
	f.DurationVar(&pause, "budget-pause", 0, "with --budget-policy pause: how long to wait for a raise (default 24h)")
	return cmd
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
