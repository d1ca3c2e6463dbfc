package flowctl

import (
	"context"
	"errors"
	"fmt"
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
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			by, err := a.who(as)
			if err != nil {
				return err
			}
			if err := c.Cancel(cmd.Context(), flowclient.CancelRequest{Run: args[0], Reason: reason, By: by}); err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, map[string]string{"run": args[0], "status": "cancel requested", "reason": reason})
			}
			fmt.Fprintf(a.stdout, "Cancel requested for run %s (%s).\n", args[0], a.asWho(by))
			return nil
		},
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
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			d, err := c.Plan(cmd.Context(), args[0], raw)
			if err != nil {
				return err
			}
			if d.State == nil {
				return fmt.Errorf("plan of %s: %s", args[0], d.StateError)
			}
			if a.output == "json" {
				return printJSON(a.stdout, d.State.Steps)
			}
			if d.Status != runs.StatusCompleted {
				fmt.Fprintf(a.stdout, "The plan stopped early: %s\n\n", display.OneLine(d.Error))
			}
			t := newTable(a.stdout, "#", "STEP", "KIND", "WOULD")
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
		},
	}
	cmd.Flags().StringVarP(&input, "input", "i", "", "input as JSON, or @file (@- for standard input)")
	return cmd
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
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			by, err := a.who(as)
			if err != nil {
				return err
			}
			isType, err := workflowOrRun(cmd.Context(), c, args[0], pauseRun)
			if err != nil {
				return err
			}
			if !isType {
				err := c.PauseRun(cmd.Context(), flowclient.PauseRequest{Run: args[0], Reason: reason, By: by})
				if err != nil {
					return notARun(cmd.Context(), c, args[0], pauseRun, err)
				}
				return a.printRunPause(args[0], true, reason,
					fmt.Sprintf("Run %s is paused: it finishes the steps in flight and starts no new one until `flowctl resume %s`.", args[0], args[0]))
			}
			if err := c.Pause(cmd.Context(), flowclient.PauseRequest{Workflow: args[0], Reason: reason, By: by}); err != nil {
				return err
			}
			return a.printPaused(cmd, c, fmt.Sprintf("New runs of %s wait in pending until `flowctl resume %s`.", args[0], args[0]))
		},
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
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			by, err := a.who(as)
			if err != nil {
				return err
			}
			isType, err := workflowOrRun(cmd.Context(), c, args[0], resumeRun)
			if err != nil {
				return err
			}
			if !isType {
				if err := c.ResumeRun(cmd.Context(), flowclient.PauseRequest{Run: args[0], By: by}); err != nil {
					return notARun(cmd.Context(), c, args[0], resumeRun, err)
				}
				return a.printRunPause(args[0], false, "", fmt.Sprintf("Run %s goes on.", args[0]))
			}
			if err := c.Resume(cmd.Context(), flowclient.PauseRequest{Workflow: args[0], By: by}); err != nil {
				return err
			}
			return a.printPaused(cmd, c, fmt.Sprintf("Runs of %s go on.", args[0]))
		},
	}
	resume.Flags().StringVar(&as, "as", "", "who resumes (default: FLOW_USER, else the OS user)")
	resume.Flags().BoolVar(&resumeRun, "run", false, "the argument is a run ID, even if a workflow type has that name")
	return []*cobra.Command{pause, resume}
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

func (a *app) printRunPause(run string, paused bool, reason, msg string) error {
	if a.output == "json" {
		out := map[string]any{"run": run, "paused": paused}
		if reason != "" {
			out["reason"] = reason
		}
		return printJSON(a.stdout, out)
	}
	fmt.Fprintln(a.stdout, msg)
	return nil
}

func (a *app) printPaused(cmd *cobra.Command, c *flowclient.Client, msg string) error {
	list, err := c.Paused(cmd.Context())
	if err != nil {
		return err
	}
	if a.output == "json" {
		if list == nil {
			list = []runs.PausedType{}
		}
		return printJSON(a.stdout, map[string]any{"paused": list})
	}
	fmt.Fprintln(a.stdout, msg)
	return nil
}
