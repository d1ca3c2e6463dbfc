package testflows

import (
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// ResetFlows are the flows of the flowctl reset tests.
func ResetFlows() []flow.Definition { return []flow.Definition{Resettable} }

// Resettable runs three shell steps that each append their name to File; step3 fails
// (once, no retries) until File.ready exists.
var Resettable = flow.Define("test.resettable", func(ctx *flow.Context, in FileInput) (string, error) {
	for _, step := range []string{"step1", "step2"} {
		if _, err := ctx.Shell(step, appendTo(in.File, step)); err != nil {
			return "", err
		}
	}
	_, err := ctx.Shell("step3", activities.Shell{
		Command: `test -e "$FILE.ready" || { echo "$FILE.ready is missing" >&2; exit 1; }; echo step3 >> "$FILE"`,
		Env:     map[string]string{"FILE": in.File},
	}, flow.Retry(temporal.RetryPolicy{MaximumAttempts: 1}))
	return "done", err
})
