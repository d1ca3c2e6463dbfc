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
	st := c.run.state
	now := runNow(c.wctx)
	i := beginStep(st, c.scope, name, runs.KindSleep, now)
	if d < 0 {
		err := fmt.Errorf("sleep %s is negative", d)
		endStep(st, i, now, runs.StepFailed, 0, err.Error(), "", nil)
		c.run.publish()
		return &StepError{Step: name, Kind: runs.KindSleep, Err: err}
	}
	if err := c.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		endStep(st, i, now, runs.StepFailed, 0, err.Error(), "", nil)
		c.run.publish()
		return &StepError{Step: name, Kind: runs.KindSleep, Err: err}
	}
	if c.run.plan {
		endStep(st, i, now, runs.StepPlanned, 0, "", "sleep "+d.String(), nil)
		c.run.publish()
		return nil
	}
	c.run.waits.now.sleep(1)
	c.setStatus(runs.StatusSleeping)
	c.run.publish()
	err := workflow.NewTimerWithOptions(c.wctx, d, workflow.TimerOptions{Summary: name}).Get(c.wctx, nil)
	c.run.waits.now.sleep(-1)
	end := runNow(c.wctx)
	if err != nil {
		endStep(st, i, end, runs.StepCancelled, 0, errorMessage(err), "", nil)
		c.run.publish()
		return &StepError{Step: name, Kind: runs.KindSleep, Err: err}
	}
	endStep(st, i, end, runs.StepCompleted, 0, "", "slept "+d.String(), nil)
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
