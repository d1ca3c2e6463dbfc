package flowctl

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/display"
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
		fmt.Fprintf(w, "Result    %s\n", display.Preview(string(d.Result), 400))
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
	st := d.State
	fmt.Fprintf(w, "Cost      %s\n", budgetLine(st))
	if st.Budget != nil {
		for _, wa := range st.Budget.Warnings {
			fmt.Fprintf(w, "Warning   %s\n", wa.String())
		}
	}
	if st.MaxAttempts > 1 {
		fmt.Fprintf(w, "Attempt   %d of %d\n", st.Attempt, st.MaxAttempts)
	}
	printWaiting(w, st)
	if st.AllowedFailures > 0 {
		fmt.Fprintf(w, "Allowed   %d step(s) failed and were allowed to\n", st.AllowedFailures)
	}
	fmt.Fprintln(w)
	if len(st.Steps) == 0 {
		fmt.Fprintln(w, "No steps yet.")
		return nil
	}
	t := newTable(w, "STEP", "KIND", "STATUS", "ATTEMPT", "DURATION", "COST", "EXIT", "DETAIL")
	addStepRows(t, st.Steps, "", time.Now())
	return t.flush()
}

// addStepRows adds one row per step; a child's steps follow its step, indented.
func addStepRows(t *table, steps []flow.StepRecord, indent string, now time.Time) {
	for _, s := range steps {
		detail := s.Output
		if s.Error != "" {
			detail = s.Error
		}
		exit := "-"
		switch {
		case s.ExitCode != nil:
			exit = strconv.Itoa(*s.ExitCode)
		case s.HTTPStatus != 0:
			exit = strconv.Itoa(s.HTTPStatus)
		}
		status := string(s.Status)
		if s.AllowedFailure {
			status += " (allowed)"
		}
		if s.OnError {
			status += " (on error)"
		}
		name := s.Name
		if s.Group != "" {
			name = s.Group + "/" + name
		}
		cost := "-"
		if !s.CostUSD.IsZero() {
			cost = "$" + s.CostUSD.StringFixed(4)
		}
		t.row(indent+name, string(s.Kind), status, strconv.Itoa(s.Attempt), fmtDuration(s.Duration(now)),
			cost, exit, display.Preview(oneLine(detail), 60))
		if s.Child != nil && len(s.Child.Steps) > 0 {
			addStepRows(t, s.Child.Steps, indent+"  ", now)
		}
	}
}

// printWaiting lists what a running run waits for and the command that answers.
func printWaiting(w io.Writer, st *flow.RunState) {
	if len(st.Waiting) == 0 {
		return
	}
	fmt.Fprintf(w, "Waiting   %s\n", strings.Join(st.Waiting, ", "))
	for _, g := range st.Gates {
		if g.Closed() {
			continue
		}
		who, deadline := gateWhoAndDeadline(g)
		fmt.Fprintf(w, "  approval %s: %d of %d from %s, %s\n    flowctl approve %s %s\n",
			g.Name, len(g.Approvals()), g.Request.Required, who, deadline, st.ID, g.Name)
	}
	for _, in := range st.Inputs {
		if in.Answer == nil {
			fmt.Fprintf(w, "  input %s: %s\n    flowctl input %s %s --data '{...}'\n", in.Name, oneLine(in.Request.Prompt), st.ID, in.Name)
		}
	}
}

// gateWhoAndDeadline says who may decide at a gate and until when.
func gateWhoAndDeadline(g *approval.Gate) (who, deadline string) {
	who = strings.Join(g.Request.Approvers, ", ")
	if who == "" {
		who = "anyone"
	}
	deadline = "no deadline"
	if g.Deadline != nil {
		deadline = "until " + fmtTime(*g.Deadline)
	}
	return who, deadline
}
