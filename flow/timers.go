package flow

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/runs"

	"go.temporal.io/sdk/workflow"
)

// Sleep waits d on a durable timer (it survives worker restarts) recorded as the step name.
// The run's status is sleeping meanwhile; the timer's summary in the Web UI is the name.
// It returns an error only when the run is cancelled during the wait.
func (c *Context) Sleep(name string, d time.Duration) error {
	if err := c.holdWhilePaused(false); err != nil { // run_pause.go: no new sleep while paused
		return &StepError{Step: name, Kind: runs.KindSleep, Err: err}
	}
	s := c.begin(name, runs.KindSleep)
	if d < 0 {
		return s.fail(s.began, runs.StepFailed, fmt.Errorf("sleep %s is negative", d))
	}
	if err := c.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return s.fail(s.began, runs.StepFailed, err)
	}
	if s.planned("sleep " + d.String()) {
		return nil
	}
	c.run.waits.now.sleep(1)
	c.setStatus(runs.StatusSleeping)
	c.run.publish()
	err := workflow.NewTimerWithOptions(c.wctx, d, workflow.TimerOptions{Summary: name}).Get(c.wctx, nil)
	c.run.waits.now.sleep(-1)
	if err != nil {
		s.end(s.now(), runs.StepCancelled, errorMessage(err), "")
		return s.err(err)
	}
	s.close(s.now(), runs.StepCompleted, 0, "", "slept "+d.String(), nil)
	c.setStatus(runs.StatusRunning) // legacy; newer runs: what the other branches wait for
	c.run.publish()
	return nil
}

// await waits for cond, at most timeout (0: no limit), with a timer summary for the Web
// UI. It reports false when the timeout passed first.
func (c *Context) await(timeout time.Duration, summary string, cond func() bool) (bool, error) {
	if timeout <= 0 {
		return true, workflow.Await(c.wctx, cond)
	}
	return workflow.AwaitWithOptions(c.wctx, workflow.AwaitOptions{
		Timeout: timeout, TimerOptions: workflow.TimerOptions{Summary: summary},
	}, cond)
}
