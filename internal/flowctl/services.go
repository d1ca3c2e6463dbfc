package flowctl

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"
)

func (a *app) servicesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "services",
		Short: "List the services the workers declared, with their limits and circuit breakers",
		Long: "List the services the workers of the task queue declared (flow.WorkerOptions.Services),\n" +
			"one row per service and worker, as each worker last reported it: the rate limit (shared by\n" +
			"all the workers), the worker's concurrency limit, and its circuit breaker's state (closed,\n" +
			"half-open, open until a time; - for a service without a breaker) and counts. Workers report\n" +
			"when they start and whenever a breaker changes state; a stopped worker keeps its last report\n" +
			"(see UPDATED).\n\n" +
			"Exit codes: 0 listed; 3 no worker of the task queue declared services; 4 the server cannot\n" +
			"be reached; 1 another error.",
		Args: cobra.NoArgs,
		RunE: a.runE(nil, func(x call) (view, error) {
			list, err := x.c.Services(x.ctx)
			if errors.Is(err, core.ErrNoCatalog) {
				return view{}, &exitError{code: ExitNotFound, err: fmt.Errorf("no worker of task queue %s declared services", x.c.TaskQueue())}
			}
			if err != nil {
				return view{}, err
			}
			return view{value: list, text: func(w io.Writer) error {
				t := newTable(w, "SERVICE", "WORKER", "RATE/S", "CONCURRENT", "BREAKER", "OPEN UNTIL", "FAILURES", "UPDATED")
				for _, s := range list {
					until := "-"
					if s.OpenUntil != nil {
						until = fmtTime(*s.OpenUntil)
					}
					t.row(s.Service, s.Worker, limit(strconv.FormatFloat(s.RatePerSecond, 'g', -1, 64), s.RatePerSecond == 0),
						limit(strconv.Itoa(s.MaxConcurrent), s.MaxConcurrent == 0), orDash(s.State), until,
						fmt.Sprintf("%d/%d", s.Failures, s.Requests), fmtTime(s.UpdatedAt.Truncate(time.Second)))
				}
				return t.flush()
			}}, nil
		}),
	}
}

// limit is v, or "-" for no limit.
func limit(v string, none bool) string {
	if none {
		return "-"
	}
	return v
}

// eventStepWaiting is the watch event of a step that waits for its service's breaker.
const eventStepWaiting = "step_waiting"

// stepGoing: a step in this state has not ended (it runs, or waits to go on).
func stepGoing(s runs.StepStatus) bool {
	return s == runs.StepRunning || s == runs.StepWaitingService || s == runs.StepWaitingCapacity
}

// emitServiceWait reports a step that failed fast on an open breaker and waits for it.
func (w *watcher) emitServiceWait(d *runs.Description, s watchedStep) {
	w.p.event(watchEvent{Event: eventStepWaiting, Run: d.ID, Time: w.now(), Status: d.Status, Step: s.event()},
		func(out io.Writer) {
			fmt.Fprintf(out, "%s  waiting   %-16s %s\n", clock(w.now()), s.path, s.Detail(100))
		})
}
