package flow

import (
	"strings"
	"testing"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/cronspec"
)

// FuzzSchedule: schedules are cron expressions from Define options. The option never
// panics (it did on "TZ="); it accepts what cronspec.Parse accepts, keeps the expression
// as given, and a refusal names the schedule.
func FuzzSchedule(f *testing.F) {
	for _, s := range []string{"0 9 * * 1-5", "*/15 * * * *", "@every 10m", "@hourly", "@daily", "61 * * * *", "* * * *", "", "@every -1s", "TZ=Europe/Paris 0 9 * * *", "CRON_TZ=x * * * * *", "CRON_TZ=UTC", "0 0 31 2 *", "1-0 * * * *", "*/0 * * * *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		var info core.WorkflowInfo
		err := Schedule(spec)(&info)
		_, cronErr := cronspec.Parse(spec)
		if (err == nil) != (cronErr == nil) {
			t.Fatalf("Schedule(%q): %v, but cron says %v", spec, err, cronErr)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "schedule ") {
				t.Fatalf("Schedule(%q): %v does not name the schedule", spec, err)
			}
			return
		}
		if len(info.Schedules) != 1 || info.Schedules[0].Spec != spec {
			t.Fatalf("Schedule(%q) kept %+v", spec, info.Schedules)
		}
	})
}
