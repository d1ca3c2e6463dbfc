package flowctl

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/display"
)

func (a *app) showCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "show RUN",
		Aliases: []string{"describe"},
		Short:   "Show a run: status, steps, result",
		Args:    exactArgs(1, "RUN"),
		RunE: a.runE(nil, func(x call) (view, error) {
			d, err := x.c.Describe(x.ctx, x.args[0])
			if err != nil {
				return view{}, err
			}
			return a.runView(x.ctx, d), nil
		}),
	}
}

// runView is a run's description: for people, a summary and a step table.
func (a *app) runView(ctx context.Context, d *runs.Description) view {
	return view{value: d, text: func(w io.Writer) error { return a.writeRun(ctx, w, d) }}
}

// writeRun writes a run's description for people: a summary and a step table.
func (a *app) writeRun(ctx context.Context, w io.Writer, d *runs.Description) error {
	fmt.Fprintf(w, "Run       %s\n", d.ID)
	fmt.Fprintf(w, "Workflow  %s\n", d.Workflow)
	fmt.Fprintf(w, "Status    %s\n", d.Status)
	started := fmtTime(d.StartTime)
	if d.CreatedBy != "" {
		started += " by " + a.startedBy(ctx, d.ID, d.CreatedBy)
	}
	fmt.Fprintf(w, "Started   %s\n", started)
	if d.CloseTime != nil {
		fmt.Fprintf(w, "Ended     %s (%s)\n", fmtTime(*d.CloseTime), fmtDuration(d.CloseTime.Sub(d.StartTime)))
	}
	if len(d.Result) > 0 && string(d.Result) != "null" {
		fmt.Fprintf(w, "Result    %s\n", display.Preview(string(d.Result), 400))
	}
	if len(d.Output) > 0 && string(d.Output) != "null" {
		fmt.Fprintf(w, "Output    %s\n", display.Preview(string(d.Output), 400))
	}
	if d.Error != "" {
		fmt.Fprintf(w, "Error     %s\n", display.OneLine(d.Error))
	}
	if d.State == nil {
		if d.StateError != "" {
			fmt.Fprintf(w, "\nSteps unavailable: %s\n", display.OneLine(d.StateError))
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
	printWaiting(w, st, a.hint)
	printKeptVotes(w, st)
	if st.AllowedFailures > 0 {
		fmt.Fprintf(w, "Allowed   %d step(s) failed and were allowed to\n", st.AllowedFailures)
	}
	fmt.Fprintln(w)
	if len(st.Steps) == 0 {
		fmt.Fprintln(w, "No steps yet.")
		return nil
	}
	t := newTable(w, "STEP", "KIND", "STATUS", "ATTEMPT", "DURATION", "COST", "EXIT", "DETAIL")
	addStepRows(t, st.Nested(), "", time.Now())
	if err := t.flush(); err != nil {
		return err
	}
	printAttempts(w, st.Nested())
	return printDecisions(w, st)
}

// printAttempts lists what each attempt of a step retried attempt by attempt cost, and why
// it failed: "summarize  attempt 1  $0.0002  agent: the answer is not JSON ...".
func printAttempts(w io.Writer, steps []runs.Step) {
	first := true
	for _, s := range steps {
		if len(s.Attempts) < 2 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nAttempts")
			first = false
		}
		for _, a := range s.Attempts {
			line := fmt.Sprintf("  %s  attempt %d  $%s", s.Label(), a.Attempt, a.CostUSD.StringFixed(4))
			if a.WaitedMS > 0 {
				line += fmt.Sprintf("  waited %s for capacity", fmtDuration(time.Duration(a.WaitedMS)*time.Millisecond))
			}
			if a.Error != "" {
				line += "  " + display.Preview(display.OneLine(a.Error), 80)
			}
			fmt.Fprintln(w, line)
		}
	}
}

// addStepRows adds one row per step; a child's steps follow its step, indented. The cells
// are the step's own display helpers, as in the Web UI's details.
func addStepRows(t *table, steps []runs.Step, indent string, now time.Time) {
	for _, s := range steps {
		t.row(indent+s.Label(), string(s.Kind), s.StatusText(), strconv.Itoa(s.Attempt), fmtDuration(s.Duration(now)),
			s.CostText(), s.CodeText(), s.Detail(60))
		if s.Child != nil && len(s.Child.Steps) > 0 {
			addStepRows(t, s.Child.Steps, indent+"  ", now)
		}
	}
}

// printWaiting lists what a running run waits for and the command that answers.
func printWaiting(w io.Writer, st *runs.State, hint func(string) string) {
	if len(st.Waiting) == 0 {
		return
	}
	fmt.Fprintf(w, "Waiting   %s\n", strings.Join(st.Waiting, ", "))
	for _, g := range st.Gates {
		if g.Closed() {
			continue
		}
		fmt.Fprintf(w, "  approval %s: %d of %d from %s, %s\n    %s\n", g.Name, len(g.Approvals()), g.Request.Required,
			anyoneIfNone(g.Request.Approvers), gateDeadline(g), hint(runs.Wait{Kind: runs.ForApproval, Name: g.Name}.Command(st.ID)))
	}
	for _, in := range st.Inputs {
		if in.Answer == nil {
			fmt.Fprintf(w, "  input %s: %s\n    %s\n", in.Name, display.OneLine(in.Request.Prompt),
				hint(runs.Wait{Kind: runs.ForInput, Name: in.Name}.Command(st.ID)))
			if len(in.Request.Schema) > 0 {
				fmt.Fprintf(w, "    the answer's schema: %s\n", display.Preview(display.OneLine(string(in.Request.Schema)), 300))
			}
		}
	}
	for _, s := range st.Steps {
		if s.Gate == nil || s.Status != runs.StepRunning {
			continue
		}
		fmt.Fprintf(w, "  gate %s: %s\n", s.Name, s.Gate.Text())
		if s.Gate.AllowManual {
			fmt.Fprintf(w, "    %s (or reject --reason ...)\n", hint(runs.Wait{Kind: runs.ForGate, Name: s.Name, Key: s.Gate.Type}.Command(st.ID)))
		}
	}
}

// anyoneIfNone lists the people (and "group:" entries) who may answer: "anyone" for none.
func anyoneIfNone(who []string) string {
	if s := strings.Join(who, ", "); s != "" {
		return s
	}
	return "anyone"
}

// gateDeadline says until when people may decide at a gate.
func gateDeadline(g *approval.Gate) string {
	if g.Deadline == nil {
		return "no deadline"
	}
	return "until " + fmtTime(*g.Deadline)
}

// printKeptVotes lists the votes sent before the run reached their gate: they count when
// a gate of that name opens, if their senders may decide it.
func printKeptVotes(w io.Writer, st *runs.State) {
	if len(st.KeptVotes) == 0 {
		return
	}
	kept := make([]string, len(st.KeptVotes))
	for i, v := range st.KeptVotes {
		kept[i] = fmt.Sprintf("%s %s by %s", v.Kind, v.Gate, v.By)
	}
	fmt.Fprintf(w, "Kept      %s (gates not reached yet: they count when a gate of that name opens, if the voter may decide it)\n",
		strings.Join(kept, ", "))
}
