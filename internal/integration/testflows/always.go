package testflows

import (
	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// AlwaysFlows are the flows of the Always, step error handler and failed output tests.
func AlwaysFlows() []flow.Definition {
	return []flow.Definition{AlwaysReport, FailedOutput}
}

// AlwaysInput configures AlwaysReport. Its Always step "report" appends the run's status
// to Log, its OnError step "cleanup" appends "cleanup", and its step error handler appends
// "handler:STEP" with a shell step of its own.
type AlwaysInput struct {
	Log string `json:"log"`
	// PIDFile, when set, makes the work step a long sleep that writes its pid there.
	PIDFile string `json:"pid_file,omitempty"`
	// Flaky adds a step that fails and is allowed to, before the work step.
	Flaky bool `json:"flaky,omitempty"`
}

// AlwaysReport runs a work step (a long sleep with PIDFile) with an Always step, an
// OnError step and a step error handler registered.
var AlwaysReport = flow.Define("test.always", func(ctx *flow.Context, in AlwaysInput) (string, error) {
	ctx.Always("report", activities.Shell{Command: `echo "$GATEFLOW_RUN_STATUS" >> "$LOG"`, Env: map[string]string{"LOG": in.Log}})
	ctx.OnError("cleanup", appendTo(in.Log, "cleanup"))
	ctx.OnStepError(func(hc *flow.Context, f flow.StepFailure) {
		if _, err := hc.Shell("on-step-error", appendTo(in.Log, "handler:"+f.Step)); err != nil {
			hc.Logger().Warn("step error handler", "error", err)
		}
	})
	if in.Flaky {
		_, _ = ctx.Shell("flaky", activities.Shell{Command: "exit 4"}, flow.AllowFailure())
	}
	work := activities.Shell{Command: "echo work"}
	if in.PIDFile != "" {
		work = activities.Shell{Command: `sleep 60 & echo $! > "$FILE"; wait`, Env: map[string]string{"FILE": in.PIDFile}}
	}
	res, err := ctx.Shell("work", work)
	return res.Stdout, err
})

// BuildReport is FailedOutput's output: what was built before the failure.
type BuildReport struct {
	Built  []string `json:"built"`
	Failed string   `json:"failed,omitempty"`
}

// FailedOutput builds "a", then fails at "b", returning what it built with the error.
var FailedOutput = flow.Define("test.failed.output", func(ctx *flow.Context, _ struct{}) (BuildReport, error) {
	var r BuildReport
	if _, err := ctx.Shell("a", activities.Shell{Command: "echo a"}); err != nil {
		return r, err
	}
	r.Built = append(r.Built, "a")
	if _, err := ctx.Shell("b", activities.Shell{Command: "echo 'b is broken' >&2; exit 5"}); err != nil {
		r.Failed = "b"
		return r, err
	}
	r.Built = append(r.Built, "b")
	return r, nil
})
