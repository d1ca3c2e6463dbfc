package flowctl

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flowclient"
)

func (a *app) schedulesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedules",
		Short: "List the schedules of the task queue's flows",
		Args:  cobra.NoArgs,
		RunE: a.runE(nil, func(x call) (view, error) {
			list, err := x.c.Schedules(x.ctx)
			if err != nil {
				return view{}, err
			}
			if len(list) == 0 {
				return view{value: list, text: say("No schedules on task queue %s (flows declare them with flow.Schedule or a definition's schedules:).\n", a.taskQueue)}, nil
			}
			return view{value: list, text: func(w io.Writer) error { return schedulesTable(w, list) }}, nil
		}),
	}
	for _, action := range []string{"trigger", "pause", "unpause"} {
		cmd.AddCommand(a.scheduleActionCommand(action))
	}
	return cmd
}

// schedulesTable writes the schedules for people.
func schedulesTable(w io.Writer, list []flowclient.ScheduleSummary) error {
	t := newTable(w, "SCHEDULE", "WORKFLOW", "SPEC", "STATE", "RUNS", "NEXT")
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
		RunE: a.runE(nil, func(x call) (view, error) {
			id, err := x.c.ControlSchedule(x.ctx, x.args[0], flowclient.ScheduleAction(action), note)
			if err != nil {
				return view{}, err
			}
			past := map[string]string{"trigger": "triggered", "pause": "paused", "unpause": "unpaused"}[action]
			return view{value: map[string]string{"schedule": id, "action": action}, text: say("Schedule %s %s.\n", id, past)}, nil
		}),
	}
	if action != "trigger" {
		cmd.Flags().StringVar(&note, "note", "", "why, kept on the schedule")
	}
	return cmd
}
