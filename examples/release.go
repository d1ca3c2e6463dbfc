package examples

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flow"
)

// ReleaseInput is the input of the release flow.
type ReleaseInput struct {
	// Version is the version to release, e.g. "1.2.3". Required.
	Version string `json:"version"`
	// HealthURL is checked with an HTTP GET; empty skips the check. With `make run`, the
	// Web UI's http://127.0.0.1:8233/healthz answers.
	HealthURL string `json:"health_url,omitempty"`
	// FailChecks makes the lint check fail, to show fail-fast and the cleanup step.
	FailChecks bool `json:"fail_checks,omitempty"`
}

// ReleaseOutput is what the release flow returns.
type ReleaseOutput struct {
	Version string      `json:"version"`
	Build   string      `json:"build"`
	Health  int         `json:"health_status,omitempty"`
	Review  string      `json:"review"`
	Smoke   SmokeOutput `json:"smoke"`
}

// Release builds, checks, reviews and smoke-tests a release: a shell build, two checks in
// parallel (fail-fast), an HTTP health check, an AI review that costs money (answered by
// the scripted provider in the examples, so no network is needed) and the smoke flow as a
// child run. A failure runs the cleanup step once.
var Release = flow.Define("release", release,
	flow.Description("Build, check, review and smoke-test a release"),
	flow.Category("delivery/web"),
	flow.Version("1"),
	flow.MaxCostUSD(decimal.RequireFromString("2.00")))

func release(ctx *flow.Context, in ReleaseInput) (ReleaseOutput, error) {
	out := ReleaseOutput{Version: in.Version}
	if strings.TrimSpace(in.Version) == "" {
		return out, flow.Permanent(fmt.Errorf("release: version is required"))
	}
	ctx.OnError("cleanup", activities.Shell{
		Command: `echo "cleaning up after $GATEFLOW_ERROR_STEP: $GATEFLOW_ERROR_MESSAGE"`,
	})

	build, err := ctx.Shell("build", activities.Shell{
		Command: `echo "compiling app $VERSION"; sleep 1; echo "built app-$VERSION.tar.gz"`,
		Env:     map[string]string{"VERSION": in.Version},
	})
	if err != nil {
		return out, err
	}
	out.Build = strings.TrimSpace(build.Stdout)

	lint := `echo "lint: clean"`
	if in.FailChecks {
		lint = `echo "lint: 2 problems" >&2; exit 1`
	}
	if _, err := ctx.Parallel("checks", flow.FailFast,
		flow.ShellStep("unit", activities.Shell{Command: `sleep 1; echo "ok  42 tests passed"`}),
		flow.ShellStep("lint", activities.Shell{Command: lint}),
	); err != nil {
		return out, err
	}

	if in.HealthURL == "" {
		ctx.Skip("health", "no health_url given")
	} else {
		health, err := ctx.HTTP("health", activities.HTTP{Method: "GET", URL: in.HealthURL})
		if err != nil {
			return out, err
		}
		out.Health = health.Status
	}

	review, err := ctx.Agent("review", activities.Agent{
		System:       "You review release notes and build logs. Answer in one line.",
		Prompt:       "Review release " + in.Version + ":\n" + build.Stdout,
		Model:        "scripted",
		MaxTokens:    200,
		MaxBudgetUSD: decimal.RequireFromString("0.25"),
	})
	if err != nil {
		return out, err
	}
	out.Review = review.Text

	smoke, err := flow.Child(ctx, "smoke", Smoke, SmokeInput{Version: in.Version})
	if err != nil {
		return out, err
	}
	out.Smoke = smoke
	return out, nil
}

// SmokeInput is the input of the smoke flow.
type SmokeInput struct {
	Version string `json:"version"`
}

// SmokeOutput is what the smoke flow returns.
type SmokeOutput struct {
	Passed int `json:"passed"`
}

// Smoke boots a release and probes it: two shell steps, run by release as a child.
var Smoke = flow.Define("smoke", smoke,
	flow.Description("Boot a release and probe it"),
	flow.Category("delivery/web"),
	flow.Version("1"))

func smoke(ctx *flow.Context, in SmokeInput) (SmokeOutput, error) {
	if _, err := ctx.Shell("boot", activities.Shell{
		Command: `echo "booting app-$VERSION"`, Env: map[string]string{"VERSION": in.Version},
	}); err != nil {
		return SmokeOutput{}, err
	}
	probe, err := ctx.Shell("probe", activities.Shell{Command: `echo 3`})
	if err != nil {
		return SmokeOutput{}, err
	}
	var n int
	_, _ = fmt.Sscan(probe.Stdout, &n)
	return SmokeOutput{Passed: n}, nil
}

// ScriptedRules are the scripted provider's answers for the example flows, so they run
// with no network and no API key.
func ScriptedRules() []llm.ScriptRule {
	return append([]llm.ScriptRule{
		{Match: "Review release", Text: "LGTM: the build is reproducible and the checks pass; ship it.",
			InputTokens: 15000, OutputTokens: 180},
		// flows/code-review.yaml
		{Match: "Code review of", Text: `{"score": 91, "comments": ["clear names", "one missing error check"]}`,
			InputTokens: 2400, OutputTokens: 60},
		{Match: "Summarise these code reviews", Text: `{"score": 88, "summary": "Good change; one error check to add."}`,
			InputTokens: 1200, OutputTokens: 40},
		// flows/incident.yaml
		{Match: "Triage this alert", Text: `{"severity": "medium", "summary": "disk 91% full on the primary database"}`,
			InputTokens: 800, OutputTokens: 30},
	}, triageRules()...) // triage.go: the triage agents' tool loops
}

// Providers are the agent providers the examples need: the scripted one.
func Providers() map[string]llm.Provider {
	return map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(ScriptedRules()...)}
}
