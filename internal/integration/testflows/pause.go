package testflows

import (
	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
)

// PauseFlows are the flows of the run pause and flow defaults tests.
func PauseFlows() []flow.Definition {
	return []flow.Definition{PauseSteps, Defaults}
}

// PauseSteps runs "first", which appends "first-start", sleeps three seconds and appends
// "first-end", then "second", which appends "second": a run paused while first is in
// flight shows whether second started.
var PauseSteps = flow.Define("test.pause.steps", func(ctx *flow.Context, in FileInput) (string, error) {
	first := activities.Shell{Command: `echo first-start >> "$FILE"; sleep 3; echo first-end >> "$FILE"`, Env: map[string]string{"FILE": in.File}}
	if _, err := ctx.Shell("first", first); err != nil {
		return "", err
	}
	if _, err := ctx.Shell("second", appendTo(in.File, "second")); err != nil {
		return "", err
	}
	return "done", nil
})

// Defaults has start defaults: priority 2, two labels and the worker tag "gpu".
var Defaults = flow.Define("test.defaults", func(ctx *flow.Context, _ struct{}) (string, error) {
	return "ok", nil
}, flow.StartDefaults(core.StartOptions{Priority: 2, Labels: map[string]string{"team": "ml", "tier": "batch"},
	WorkerTags: []string{"gpu"}}))
