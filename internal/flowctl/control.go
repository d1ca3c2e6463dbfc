package flowctl

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flow"
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
			if err := c.Cancel(cmd.Context(), flow.CancelRequest{Run: args[0], Reason: reason, By: identity(as)}); err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, map[string]string{"run": args[0], "status": "cancel requested", "reason": reason})
			}
			fmt.Fprintf(a.stdout, "Cancel requested for run %s.\n", args[0])
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
			if d.Status != flow.StatusCompleted {
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

func (a *app) pauseCommands() []*cobra.Command {
	var reason, as string
	pause := &cobra.Command{
		Use:   "pause WORKFLOW [--reason TEXT]",
		Short: "Hold new runs of a workflow in pending until resumed (running ones go on)",
		Args:  exactArgs(1, "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			if err := c.Pause(cmd.Context(), flow.PauseRequest{Workflow: args[0], Reason: reason, By: identity(as)}); err != nil {
				return err
			}
			return a.printPaused(cmd, c, fmt.Sprintf("New runs of %s wait in pending until `flowctl resume %s`.", args[0], args[0]))
		},
	}
	pause.Flags().StringVar(&reason, "reason", "", "why, shown with the paused workflows")
	pause.Flags().StringVar(&as, "as", "", "who pauses (default: FLOW_USER, else the OS user)")
	resume := &cobra.Command{
		Use:   "resume WORKFLOW",
		Short: "Let a paused workflow's held and new runs go on",
		Args:  exactArgs(1, "WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			if err := c.Resume(cmd.Context(), flow.PauseRequest{Workflow: args[0], By: identity(as)}); err != nil {
				return err
			}
			return a.printPaused(cmd, c, fmt.Sprintf("Runs of %s go on.", args[0]))
		},
	}
	resume.Flags().StringVar(&as, "as", "", "who resumes (default: FLOW_USER, else the OS user)")
	return []*cobra.Command{pause, resume}
}

func (a *app) printPaused(cmd *cobra.Command, c *flow.Client, msg string) error {
	list, err := c.Paused(cmd.Context())
	if err != nil {
		return err
	}
	if a.output == "json" {
		if list == nil {
			list = []flow.PausedType{}
		}
		return printJSON(a.stdout, map[string]any{"paused": list})
	}
	fmt.Fprintln(a.stdout, msg)
	return nil
}
