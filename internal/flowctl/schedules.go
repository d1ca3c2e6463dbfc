package flowctl

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flowclient"
)

func (a *app) schedulesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "List the schedules of the task queue's flows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.Schedules(cmd.Context())
			if err != nil {
				return err
			}
			if a.output == "json" {
				if list == nil {
					list = []flowclient.ScheduleSummary{}
				}
				return printJSON(a.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintf(a.stdout, "No schedules on task queue %s (flows declare them with flow.Schedule or a definition's schedules:).\n", a.taskQueue)
				return nil
			}
			t := newTable(a.stdout, "SCHEDULE", "WORKFLOW", "SPEC", "STATE", "RUNS", "NEXT")
			for _, s := range list {
				state := "active"
				if s.Paused {
					state = "paused"
				}
				next := "-"
				if len(s.Next) > 0 {
					next = fmtTime(s.Next[0])
				}
				t.row(s.ID, s.Workflow, s.Spec, state, fmt.Sprint(s.Actions), next)
			}
			return t.flush()
		},
	}
	for _, action := range []string{"trigger", "pause", "unpause"} {
		cmd.AddCommand(a.scheduleActionCommand(action))
	}
	return cmd
}

func (a *app) scheduleActionCommand(action string) *cobra.Command {
	var note string
	short := map[string]string{
		"trigger": "Start a run of a schedule now",
		"pause":   "Pause a schedule (no runs until unpaused)",
		"unpause": "Unpause a schedule",
	}[action]
	cmd := &cobra.Command{
		Use:   action + " SCHEDULE|WORKFLOW",
		Short: short,
		Args:  exactArgs(1, "SCHEDULE or WORKFLOW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			id, err := c.ControlSchedule(cmd.Context(), args[0], flowclient.ScheduleAction(action), note)
			if err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, map[string]string{"schedule": id, "action": action})
			}
			past := map[string]string{"trigger": "triggered", "pause": "paused", "unpause": "unpaused"}[action]
			fmt.Fprintf(a.stdout, "Schedule %s %s.\n", id, past)
			return nil
		},
	}
	if action != "trigger" {
		cmd.Flags().StringVar(&note, "note", "", "why, kept on the schedule")
	}
	return cmd
}
