package flowctl

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flow"
)

func (a *app) showCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "show RUN",
		Aliases: []string{"describe"},
		Short:   "Show a run: status, steps, result",
		Args:    exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			d, err := c.Describe(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printRun(d)
		},
	}
}

// printRun prints a run description as a summary and a step table, or JSON.
func (a *app) printRun(d *flow.RunDescription) error {
	if a.output == "json" {
		return printJSON(a.stdout, d)
	}
	w := a.stdout
	fmt.Fprintf(w, "Run       %s\n", d.ID)
	fmt.Fprintf(w, "Workflow  %s\n", d.Workflow)
	fmt.Fprintf(w, "Status    %s\n", d.Status)
	started := fmtTime(d.StartTime)
	if d.CreatedBy != "" {
		started += " by " + d.CreatedBy
	}
	fmt.Fprintf(w, "Started   %s\n", started)
	if d.CloseTime != nil {
		fmt.Fprintf(w, "Ended     %s (%s)\n", fmtTime(*d.CloseTime), fmtDuration(d.CloseTime.Sub(d.StartTime)))
	}
	if len(d.Result) > 0 && string(d.Result) != "null" {
		fmt.Fprintf(w, "Result    %s\n", flow.Preview(string(d.Result), 400))
	}
	if d.Error != "" {
		fmt.Fprintf(w, "Error     %s\n", oneLine(d.Error))
	}
	if d.State == nil {
		if d.StateError != "" {
			fmt.Fprintf(w, "\nSteps unavailable: %s\n", oneLine(d.StateError))
		}
		return nil
	}
	fmt.Fprintln(w)
	if len(d.State.Steps) == 0 {
		fmt.Fprintln(w, "No steps yet.")
		return nil
	}
	t := newTable(w, "STEP", "KIND", "STATUS", "ATTEMPT", "DURATION", "EXIT", "DETAIL")
	now := time.Now()
	for _, s := range d.State.Steps {
		detail := s.Output
		if s.Error != "" {
			detail = s.Error
		}
		exit := "-"
		if s.ExitCode != nil {
			exit = strconv.Itoa(*s.ExitCode)
		}
		t.row(s.Name, string(s.Kind), string(s.Status), strconv.Itoa(s.Attempt), fmtDuration(s.Duration(now)),
			exit, flow.Preview(oneLine(detail), 60))
	}
	return t.flush()
}
