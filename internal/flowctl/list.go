package flowctl

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flow"
)

func (a *app) listCommand() *cobra.Command {
	var opts flow.ListOptions
	var status string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List recent runs, newest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status != "" {
				st, err := flow.ParseStatus(status)
				if err != nil {
					return usageErr("--status %q: %v", status, err)
				}
				opts.Status = st
			}
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			runs, err := c.List(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if a.output == "json" {
				if runs == nil {
					runs = []flow.RunSummary{}
				}
				return printJSON(a.stdout, runs)
			}
			t := newTable(a.stdout, "RUN", "WORKFLOW", "STATUS", "STARTED", "DURATION", "BY")
			now := time.Now()
			for _, r := range runs {
				end := now
				if r.CloseTime != nil {
					end = *r.CloseTime
				}
				t.row(r.ID, r.Workflow, string(r.Status), fmtTime(r.StartTime), fmtDuration(end.Sub(r.StartTime)), orDash(r.CreatedBy))
			}
			return t.flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Workflow, "workflow", "", "only runs of this workflow")
	f.StringVar(&status, "status", "", "only runs with this status (running, completed, failed, ...)")
	f.IntVar(&opts.Limit, "limit", 20, "at most this many runs")
	return cmd
}
