package flow

import (
	"go.temporal.io/sdk/workflow"
)

// stepsVersion gates the MaxSteps guard: a run recorded before the guard existed has no
// marker and is never refused; a run reaching its limit records the marker first.
const stepsVersion = "gateflow.max-steps"

// stepsPart counts the run's steps for the MaxSteps guard.
type stepsPart struct {
	// counted is how many steps the run recorded and was allowed to.
	counted int
	// gate is the version of stepsVersion once asked (0: not yet asked).
	gate  workflow.Version
	asked bool
}

// countStep counts the step name against the run's MaxSteps guard and returns a
// *GuardError for the step past the limit, which the caller records as failed without
// running it (a refused step does not count). OnError and Always steps are not counted.
func (c *Context) countStep(name string) error {
	p := &c.run.steps
	err := c.run.setup.guards.checkSteps(name, p.counted+1)
	if err == nil {
		p.counted++
		return nil
	}
	// Ask for the version only now: runs below their limit record no marker.
	if !p.asked {
		p.gate, p.asked = workflow.GetVersion(c.wctx, stepsVersion, workflow.DefaultVersion, 1), true
	}
	if p.gate == workflow.DefaultVersion {
		p.counted++ // a run recorded before the guard: it goes on as it did
		return nil
	}
	return err
}
