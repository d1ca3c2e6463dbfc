// Package testflows holds the flows gateflow's integration tests run: in the test process
// and in testworker, a worker binary the crash tests kill.
package testflows

import (
	"errors"
	"slices"
	"time"

	"github.com/gateflow/gateflow/schedule"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// All returns every test flow.
func All() []flow.Definition {
	return slices.Concat([]flow.Definition{Failing, Steps, Crashy, FailFast, Allowed, Retried, Attempts, Cancellable,
		Agents, Deep, Wide, Tokens, WallTime, Counting, CancelChild, CancelParent, Busy},
		PeopleFlows(), SendFlows(), PauseFlows(), BudgetFlows(), FanoutFlows(), AlwaysFlows(),
		PaidFlows(),
		QualityFlows(),
		GateFlows(),
		RoutingFlows(),
		MaxRunsFlows(),
		StartFlows(),
		SoakFlows(),
		ResetFlows(),
	)
}

// Failing runs a step that writes to stderr and exits 3.
var Failing = flow.Define("test.failing", func(ctx *flow.Context, _ struct{}) (string, error) {
	if _, err := ctx.Shell("prepare", activities.Shell{Command: "echo ready"}); err != nil {
		return "", err
	}
	_, err := ctx.Shell("explode", activities.Shell{Command: "echo starting; echo 'disk full: cannot write /tmp/x' >&2; exit 3"})
	return "unreachable", err
})

// FileInput names a file the steps append to, so tests can count what ran (test.http
// takes only URL: File may be empty, which a required member may not be).
type FileInput struct {
	File string `json:"file" gateflow:"allowempty"`
	URL  string `json:"url,omitempty"`
}

func appendTo(file, line string) activities.Shell {
	return activities.Shell{Command: `echo "$LINE" >> "$FILE"`, Env: map[string]string{"FILE": file, "LINE": line}}
}

// Steps runs an HTTP step against in.URL with a secret header, then a shell step.
var Steps = flow.Define("test.http", func(ctx *flow.Context, in FileInput) (int, error) {
	res, err := ctx.HTTP("call", activities.HTTP{
		Method:  "POST",
		URL:     in.URL,
		Headers: map[string]string{"Authorization": "Bearer " + activities.Secret("GATEFLOW_TEST_TOKEN")},
		JSON:    []byte(`{"hello":"world"}`),
	})
	if err != nil {
		return 0, err
	}
	return res.Status, nil
})

// Crashy appends "before", runs a long step (its worker is killed meanwhile), then
// appends "after".
var Crashy = flow.Define("test.crashy", func(ctx *flow.Context, in FileInput) (string, error) {
	if _, err := ctx.Shell("before", appendTo(in.File, "before")); err != nil {
		return "", err
	}
	if _, err := ctx.Shell("long", activities.Shell{
		Command: `echo start >> "$FILE"; sleep 4; echo end >> "$FILE"`, Env: map[string]string{"FILE": in.File},
	}, flow.HeartbeatTimeout(2*time.Second)); err != nil {
		return "", err
	}
	res, err := ctx.Shell("after", appendTo(in.File, "after"))
	return res.Stdout, err
})

// FailFast runs a long sleeper next to a step that fails quickly. The sleeper writes its
// shell's pid to in.File.
var FailFast = flow.Define("test.failfast", func(ctx *flow.Context, in FileInput) (string, error) {
	_, err := ctx.Parallel("pair", flow.FailFast,
		flow.ShellStep("sleeper", activities.Shell{Command: `sleep 30 & echo $! > "$FILE"; wait`, Env: map[string]string{"FILE": in.File}}),
		flow.ShellStep("breaker", activities.Shell{Command: `sleep 1; echo broken >&2; exit 1`}),
	)
	return "", err
})

// Allowed has a step that fails and is allowed to.
var Allowed = flow.Define("test.allowed", func(ctx *flow.Context, _ struct{}) (string, error) {
	var allowed *flow.AllowedFailure
	if _, err := ctx.Shell("flaky", activities.Shell{Command: "exit 4"}, flow.AllowFailure()); err != nil && !errors.As(err, &allowed) {
		return "", err
	}
	res, err := ctx.Shell("main", activities.Shell{Command: "echo done"})
	return res.Stdout, err
})

// RetryInput chooses the retry policy of the failing step.
type RetryInput struct {
	File         string `json:"file"`
	NonRetryable bool   `json:"non_retryable"`
}

// Retried runs a step that always fails, with 3 attempts; with NonRetryable its error type
// is non-retryable.
var Retried = flow.Define("test.retried", func(ctx *flow.Context, in RetryInput) (string, error) {
	p := temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3}
	if in.NonRetryable {
		p.NonRetryableErrorTypes = []string{activities.ShellExitErrorType}
	}
	_, err := ctx.Shell("always-fails", activities.Shell{
		Command: `echo try >> "$FILE"; exit 9`, Env: map[string]string{"FILE": in.File},
	}, flow.Retry(p))
	return "", err
})

// Attempts fails every run attempt (3 of them); its cleanup step appends to the file.
var Attempts = flow.Define("test.attempts", func(ctx *flow.Context, in FileInput) (string, error) {
	ctx.OnError("cleanup", appendTo(in.File, "cleanup"))
	if _, err := ctx.Shell("work", appendTo(in.File, "work")); err != nil {
		return "", err
	}
	_, err := ctx.Shell("fail", activities.Shell{Command: "exit 1"})
	return "", err
}, flow.MaxAttempts(3))

// Cancellable runs a long step whose shell writes its pid to the file; a cleanup step
// appends "cleanup" to File+".cleanup".
var Cancellable = flow.Define("test.cancellable", func(ctx *flow.Context, in FileInput) (string, error) {
	ctx.OnError("cleanup", appendTo(in.File+".cleanup", "cleanup"))
	_, err := ctx.Shell("long", activities.Shell{Command: `sleep 60 & echo $! > "$FILE"; wait`, Env: map[string]string{"FILE": in.File}})
	return "", err
})

// AgentInput chooses the model of each agent step.
type AgentInput struct {
	Prompt string `json:"prompt"`
}

// Agents asks OpenAI-compatible and Anthropic servers the same question.
var Agents = flow.Define("test.agents", func(ctx *flow.Context, in AgentInput) ([]string, error) {
	o, err := ctx.Agent("ask-openai", activities.Agent{Prompt: in.Prompt, Model: "gpt-4o-mini", MaxTokens: 600,
		MaxBudgetUSD: decimal.RequireFromString("0.01")})
	if err != nil {
		return nil, err
	}
	a, err := ctx.Agent("ask-anthropic", activities.Agent{Prompt: in.Prompt, System: "Be brief.", Model: "claude-sonnet-4", MaxTokens: 600})
	if err != nil {
		return nil, err
	}
	return []string{o.Text, a.Text}, nil
})

// DepthInput is how deep Deep goes.
type DepthInput struct {
	Level int `json:"level"`
}

// Deep runs itself as a child until its guard stops it (depth limit 2).
var Deep flow.Definition

var deep *flow.Flow[DepthInput, int]

func init() {
	deep = flow.Define("test.deep", func(ctx *flow.Context, in DepthInput) (int, error) {
		if in.Level >= 5 {
			return in.Level, nil
		}
		return flow.Child(ctx, "deeper", deep, DepthInput{Level: in.Level + 1})
	}, flow.WithGuards(flow.Guards{MaxChildDepth: 2}))
	Deep = deep
}

// Wide runs three steps in parallel under a fan-out limit of 2.
var Wide = flow.Define("test.wide", func(ctx *flow.Context, _ struct{}) (string, error) {
	_, err := ctx.Parallel("three", flow.WaitAll,
		flow.ShellStep("a", activities.Shell{Command: "true"}),
		flow.ShellStep("b", activities.Shell{Command: "true"}),
		flow.ShellStep("c", activities.Shell{Command: "true"}))
	return "", err
}, flow.WithGuards(flow.Guards{MaxFanOut: 2}))

// Tokens asks the scripted provider twice under a 1,000-token limit (600 tokens each).
var Tokens = flow.Define("test.tokens", func(ctx *flow.Context, _ struct{}) (string, error) {
	for _, n := range []string{"first", "second"} {
		if _, err := ctx.Agent(n, activities.Agent{Prompt: "count tokens", Model: "scripted"}); err != nil {
			return "", err
		}
	}
	return "", nil
}, flow.WithGuards(flow.Guards{MaxTokens: 1000}))

// WallTime sleeps past its 1s wall-time limit, then tries a step.
var WallTime = flow.Define("test.walltime", func(ctx *flow.Context, _ struct{}) (string, error) {
	if err := ctx.Sleep("nap", 1500*time.Millisecond); err != nil {
		return "", err
	}
	_, err := ctx.Shell("too-late", activities.Shell{Command: "echo late"})
	return "", err
}, flow.WithGuards(flow.Guards{MaxWallTime: time.Second}))

// CountResult reports a cost, so Step charges it.
type CountResult struct {
	N    int             `json:"n"`
	Cost decimal.Decimal `json:"cost"`
}

// StepCostUSD implements activities.CostReporter.
func (r CountResult) StepCostUSD() decimal.Decimal { return r.Cost }

// Count is a custom activity: it counts the words of a text and costs $0.001 per word.
func Count(text string) (CountResult, error) {
	n := 0
	inWord := false
	for _, r := range text {
		space := r == ' ' || r == '\n' || r == '\t'
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return CountResult{N: n, Cost: decimal.New(int64(n), -3)}, nil
}

// Counting runs the custom Count activity as a step, then sleeps and skips.
var Counting = flow.Define("test.counting", func(ctx *flow.Context, in AgentInput) (int, error) {
	res, err := flow.Step[CountResult](ctx.With(flow.StepTimeout(time.Minute)), "count", Count, in.Prompt)
	if err != nil {
		return 0, err
	}
	if err := ctx.Sleep("pause", 200*time.Millisecond); err != nil {
		return 0, err
	}
	ctx.Skip("publish", "dry run")
	return res.N, nil
})

// CancelChild waits at a gate nobody answers.
var CancelChild = flow.Define("test.cancel.child", func(ctx *flow.Context, _ struct{}) (string, error) {
	_, err := ctx.Approval("never", approval.Request{Message: "wait", Approvers: []string{"nobody"}})
	return "", err
})

// CancelParent registers a cleanup step and runs CancelChild.
var CancelParent = flow.Define("test.cancel.parent", func(ctx *flow.Context, in FileInput) (string, error) {
	ctx.OnError("cleanup", appendTo(in.File, "cleanup"))
	return flow.Child(ctx, "kid", CancelChild, struct{}{})
})

// Scheduled runs every 2 seconds; it is not in All(), so only the schedule test's worker
// creates its schedule.
var Scheduled = flow.Define("test.scheduled", func(ctx *flow.Context, in FileInput) (string, error) {
	_, err := ctx.Shell("tick", appendTo(in.File, "tick"))
	return "", err
}, flow.Schedule("@every 2s", schedule.Input(FileInput{File: "/dev/null"})))

// Busy records "start" and "end" around a one-second shell step, to measure concurrency.
var Busy = flow.Define("test.busy", func(ctx *flow.Context, in FileInput) (string, error) {
	_, err := ctx.Shell("work", activities.Shell{Command: `echo start >> "$FILE"; sleep 1; echo end >> "$FILE"`,
		Env: map[string]string{"FILE": in.File}})
	return "", err
})
