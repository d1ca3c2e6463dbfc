package flowctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/display"
)

func (a *app) cancelCommand() *cobra.Command {
	var reason, as string
	cmd := &cobra.Command{
		Use:   "cancel RUN [--reason TEXT]",
		Short: "Cancel a run and its children; its OnError steps run",
		Args:  exactArgs(1, "RUN"),
		RunE: a.runE(&as, func(x call) (view, error) {
			if err := x.c.Cancel(x.ctx, flowclient.CancelRequest{Run: x.args[0], Reason: reason, By: x.by}); err != nil {
				return view{}, err
			}
			return view{value: map[string]string{"run": x.args[0], "status": "cancel requested", "reason": reason},
				text: say("Cancel requested for run %s (%s).\n", x.args[0], a.asWho(x.by))}, nil
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept with the run")
	cmd.Flags().StringVar(&as, "as", "", "who cancels (default: FLOW_USER, else the OS user)")
	return cmd
}

func (a *app) planCommand() *cobra.Command {
	var input string
	cmd := &cobra.Command{
		Use:   "plan WORKFLOW [--input JSON|@file]",
		Short: "Show the steps a run would take, running none of them",
		Long: "Run the handler on a worker with every step stubbed: no side effects, approvals\n" +
			"assumed granted, inputs and signals answered with zero values. Prints the steps in\n" +
			"order with their kinds, options and the money they would reserve.",
		Args: exactArgs(1, "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := a.readInput(input)
			if err != nil {
				return err
			}
			return a.run(cmd, args, nil, func(x call) (view, error) {
				d, err := x.c.Plan(x.ctx, x.args[0], raw)
				if err != nil {
					return view{}, err
				}
				if d.State == nil {
					return view{}, fmt.Errorf("plan of %s: %s", x.args[0], d.StateError)
				}
				return view{value: d.State.Steps, text: func(w io.Writer) error { return planTable(w, d) }}, nil
			})
		},
	}
	cmd.Flags().StringVarP(&input, "input", "i", "", "input as JSON, or @file (@- for standard input)")
	return cmd
}

// planTable writes a plan's steps for people.
func planTable(w io.Writer, d *runs.Description) error {
	if d.Status != runs.StatusCompleted {
		fmt.Fprintf(w, "The plan stopped early: %s\n\n", display.OneLine(d.Error))
	}
	t := newTable(w, "#", "STEP", "KIND", "WOULD")
	for i, s := range d.State.Steps {
		name := s.Name
		if s.Group != "" {
			name = s.Group + "/" + name
		}
		detail := s.Output
		if s.Error != "" {
			detail = "refused: " + s.Error
		}
		t.row(fmt.Sprint(i+1), name, string(s.Kind), strings.TrimSpace(detail))
	}
	return t.flush()
}

// pauseHelp explains how pause and resume tell a workflow type from a run.
const pauseHelp = "The argument is looked up in the task queue's catalog first: a workflow type pauses\n" +
	"(resumes) the type, anything else is taken as a run ID. A name that is both a workflow\n" +
	"type and a run ID means the workflow type; --run makes it mean the run. An argument that\n" +
	"is neither exits 2; with --run, a run that does not exist exits 3, and a run that has\n" +
	"ended (or is already paused, or not paused) exits 6."

func (a *app) pauseCommands() []*cobra.Command {
	var reason, as string
	var pauseRun, resumeRun bool
	pause := &cobra.Command{
		Use:   "pause WORKFLOW|RUN [--run] [--reason TEXT]",
		Short: "Hold new runs of a workflow in pending, or pause one run, until resumed",
		Long: "With a workflow type, hold its new runs in pending until `flowctl resume WORKFLOW`;\n" +
			"running ones go on. With a run ID, pause that run: it finishes the steps in flight\n" +
			"and starts no new step, child or sleep until `flowctl resume RUN` (its gates keep\n" +
			"waiting, and their deadlines keep running).\n\n" + pauseHelp,
		Args: exactArgs(1, "WORKFLOW or RUN"),
		RunE: a.runE(&as, func(x call) (view, error) { return a.pauseOrResume(x, true, pauseRun, reason) }),
	}
	pause.Flags().StringVar(&reason, "reason", "", "why, shown with the paused workflows or the paused run")
	pause.Flags().StringVar(&as, "as", "", "who pauses (default: FLOW_USER, else the OS user)")
	pause.Flags().BoolVar(&pauseRun, "run", false, "the argument is a run ID, even if a workflow type has that name")
	resume := &cobra.Command{
		Use:   "resume WORKFLOW|RUN [--run]",
		Short: "Let a paused workflow's held and new runs go on, or a paused run",
		Long: "With a workflow type, release its held runs and let new ones start. With a run ID,\n" +
			"let the paused run go on where it stopped.\n\n" + pauseHelp,
		Args: exactArgs(1, "WORKFLOW or RUN"),
		RunE: a.runE(&as, func(x call) (view, error) { return a.pauseOrResume(x, false, resumeRun, "") }),
	}
	resume.Flags().StringVar(&as, "as", "", "who resumes (default: FLOW_USER, else the OS user)")
	resume.Flags().BoolVar(&resumeRun, "run", false, "the argument is a run ID, even if a workflow type has that name")
	return []*cobra.Command{pause, resume}
}

// pauseOrResume pauses (pause) or resumes the workflow type or the run x.args[0] names
// (a run with forceRun).
func (a *app) pauseOrResume(x call, pause bool, forceRun bool, reason string) (view, error) {
	arg := x.args[0]
	isType, err := workflowOrRun(x.ctx, x.c, arg, forceRun)
	if err != nil {
		return view{}, err
	}
	if !isType {
		do, msg := x.c.ResumeRun, fmt.Sprintf("Run %s goes on.", arg)
		if pause {
			do, msg = x.c.PauseRun, fmt.Sprintf("Run %s is paused: it finishes the steps in flight and starts no new one until `flowctl resume %s`.", arg, arg)
		}
		if err := do(x.ctx, flowclient.PauseRequest{Run: arg, Reason: reason, By: x.by}); err != nil {
			return view{}, notARun(x.ctx, x.c, arg, forceRun, err)
		}
		out := map[string]any{"run": arg, "paused": pause}
		if reason != "" {
			out["reason"] = reason
		}
		return view{value: out, text: say("%s\n", msg)}, nil
	}
	do, msg := x.c.Resume, fmt.Sprintf("Runs of %s go on.", arg)
	if pause {
		do, msg = x.c.Pause, fmt.Sprintf("New runs of %s wait in pending until `flowctl resume %s`.", arg, arg)
	}
	if err := do(x.ctx, flowclient.PauseRequest{Workflow: arg, Reason: reason, By: x.by}); err != nil {
		return view{}, err
	}
	list, err := x.c.Paused(x.ctx)
	if err != nil {
		return view{}, err
	}
	if list == nil {
		list = []runs.PausedType{}
	}
	return view{value: map[string]any{"paused": list}, text: say("%s\n", msg)}, nil
}

// workflowOrRun reports whether arg names a workflow type of the catalog (which wins over
// a run of the same ID) rather than a run; forceRun makes it a run.
func workflowOrRun(ctx context.Context, c *flowclient.Client, arg string, forceRun bool) (bool, error) {
	if forceRun {
		return false, nil
	}
	cat, err := c.Workflows(ctx)
	if err != nil && !errors.Is(err, core.ErrNoCatalog) {
		return false, err
	}
	return isWorkflowType(cat, arg), nil
}

// isWorkflowType reports whether cat (nil: no catalog) has a workflow named name.
func isWorkflowType(cat *core.Catalog, name string) bool {
	if cat == nil {
		return false
	}
	_, ok := cat.Lookup(name)
	return ok
}

// notARun explains a run pause that found no run: without --run, the argument was neither
// a workflow type nor a run (bad usage, as an unknown workflow always was).
func notARun(ctx context.Context, c *flowclient.Client, arg string, forceRun bool, err error) error {
	var nf *flowclient.RunNotFoundError
	if forceRun || !errors.As(err, &nf) {
		return err
	}
	known := "none"
	if cat, cerr := c.Workflows(ctx); cerr == nil && len(cat.Names()) > 0 {
		known = strings.Join(cat.Names(), ", ")
	}
	return usageErr("%s is neither a workflow on task queue %s (known: %s) nor a run", arg, c.TaskQueue(), known)
}
