package flow

import (
	"fmt"
	"slices"

	"github.com/gateflow/gateflow/schedule"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/cronspec"
)

// Schedule runs the flow on a schedule: spec is a cron expression ("*/15 * * * *") or
// "@every 10m". An invalid expression is refused at Define (see Flow.Err). The worker that
// serves the flow creates or updates one Temporal Schedule per declared schedule when it
// starts, named by its position among the flow's schedules or by its schedule.ID;
// scheduled runs reserve their cap against the monthly quotas before any step.
func Schedule(spec string, opts ...schedule.Option) Option {
	return func(i *core.WorkflowInfo) error {
		if _, err := cronspec.Parse(spec); err != nil {
			return fmt.Errorf("schedule %q: %v", spec, err)
		}
		s := schedule.Info{Spec: spec}
		for _, o := range opts {
			if err := o(&s); err != nil {
				return err
			}
		}
		if s.ID != "" && slices.ContainsFunc(i.Schedules, func(x schedule.Info) bool { return x.ID == s.ID }) {
			return fmt.Errorf("schedule %q: id %q is given to another schedule of the flow", spec, s.ID)
		}
		i.Schedules = append(i.Schedules, s)
		return nil
	}
}
