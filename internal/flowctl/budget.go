package flowctl

import (
	"fmt"
	"io"

	"github.com/gateflow/gateflow/runs"
	"github.com/shopspring/decimal"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/flowclient"
)

func (a *app) budgetCommand() *cobra.Command {
	var month string
	cmd := &cobra.Command{
		Use:   "budget",
		Short: "Show the month's spend per workflow and overall, with or without quotas",
		Args:  cobra.NoArgs,
		RunE: a.runE(nil, func(x call) (view, error) {
			lines, err := x.c.MonthlySpend(x.ctx, month)
			if err != nil {
				return view{}, err
			}
			return view{value: lines, text: func(w io.Writer) error { return spendTable(w, lines) }}, nil
		}),
	}
	cmd.Flags().StringVar(&month, "month", "", "the month, e.g. 2026-11 (default: this UTC month)")
	cmd.AddCommand(a.budgetRaiseCommand())
	return cmd
}

// spendTable writes the month's spend for people.
func spendTable(w io.Writer, lines []runs.SpendLine) error {
	t := newTable(w, "SCOPE", "MONTH", "SPENT", "RESERVED", "QUOTA", "LEFT", "NEW RUNS")
	for _, l := range lines {
		quota, left, state := "no quota", "-", "allowed"
		if l.QuotaUSD != nil {
			quota = budget.FormatUSD(*l.QuotaUSD)
			rest, _ := l.LeftUSD()
			left = budget.FormatUSD(rest)
			if l.Exhausted {
				state = "refused"
			}
		}
		t.row(l.Scope.Describe(), l.Month, budget.FormatUSD(l.SpentUSD), budget.FormatUSD(l.ReservedUSD), quota, left, state)
	}
	return t.flush()
}

func (a *app) budgetRaiseCommand() *cobra.Command {
	var to, as string
	cmd := &cobra.Command{
		Use:   "raise RUN --to USD",
		Short: "Raise a run's money cap (a run paused by its budget goes on)",
		Args:  exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			amount, err := budget.ParseUSD(to)
			if err != nil || to == "" {
				return usageErr("--to %q: want an amount in USD, e.g. 5.00", to)
			}
			return a.run(cmd, args, &as, func(x call) (view, error) {
				cp, err := x.c.RaiseBudget(x.ctx, flowclient.BudgetRequest{Run: x.args[0], To: amount, By: x.by})
				if err != nil {
					return view{}, err
				}
				return view{value: cp, text: say("Run %s now has a cap of %s (%s).\n", x.args[0], budget.FormatUSD(cp.Amount), a.asWho(x.by))}, nil
			})
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the new cap in USD")
	cmd.Flags().StringVar(&as, "as", "", "who raises it (default: FLOW_USER, else the OS user)")
	return cmd
}

// budgetLine summarises a run's money for show.
func budgetLine(st *runs.State) string {
	s := "$" + st.CostUSD.StringFixed(4)
	if st.Budget != nil && st.Budget.Cap.Set {
		s += " of " + st.Budget.Cap.String() + " cap"
		if st.Budget.Reserved.IsPositive() {
			s += ", " + budget.FormatUSD(st.Budget.Reserved) + " reserved"
		}
	}
	if st.Tokens.Total() > 0 {
		s += fmt.Sprintf(" (%d tokens: %d in, %d out)", st.Tokens.Total(), st.Tokens.Input, st.Tokens.Output)
	}
	unconfirmed := decimal.Zero
	for _, step := range st.Steps {
		unconfirmed = unconfirmed.Add(step.UnconfirmedUSD)
	}
	if unconfirmed.IsPositive() {
		s += "; " + budget.FormatUSD(unconfirmed) + " of it unconfirmed (attempts lost in flight, charged their reservation)"
	}
	return s
}
