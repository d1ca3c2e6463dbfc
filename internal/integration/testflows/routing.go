package testflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// RoutingFlows are the flows of the error routing tests (OnFailure, OnTimeout, Label,
// QueueTimeout, jittered retries).
func RoutingFlows() []flow.Definition {
	return []flow.Definition{GotoBuild, RoutedTimeouts, QueueTimedOut, Jittered}
}

// GotoInput says where GotoBuild counts its attempts, how many it needs, and how often
// its label may run.
type GotoInput struct {
	File      string `json:"file"`
	Until     int    `json:"until"`
	MaxVisits int    `json:"max_visits"`
}

// GotoBuild runs the shell step "build" inside the label "build": build adds one to the
// counter in File and fails until the counter reaches Until; its failure goes back to
// the label, which runs at most MaxVisits times.
var GotoBuild = flow.Define("test.routing.goto", func(ctx *flow.Context, in GotoInput) (string, error) {
	var out string
	err := ctx.Label("build", func(c *flow.Context) error {
		res, err := c.Shell("build", activities.Shell{
			Command: `n=$(( $(cat "$FILE" 2>/dev/null || echo 0) + 1 )); echo $n > "$FILE"; echo "visit $n"; [ "$n" -ge "$UNTIL" ] || { echo "not yet $n" >&2; exit 1; }`,
			Env:     map[string]string{"FILE": in.File, "UNTIL": fmt.Sprint(in.Until)},
		}, flow.OnFailure(flow.Goto("build")))
		out = res.Stdout
		return err
	}, flow.MaxVisits(in.MaxVisits))
	return out, err
})

// RoutedTimeouts runs a custom step that Temporal times out (start to close) routed to
// Continue, then a shell step killed at its own timeout routed to a fallback, whose
// output it returns. Neither is retried.
var RoutedTimeouts = flow.Define("test.routing.timeouts", func(ctx *flow.Context, _ struct{}) (string, error) {
	once := flow.Retry(temporal.RetryPolicy{MaximumAttempts: 1})
	_, err := flow.Step[string](ctx.With(flow.StepTimeout(time.Second), once, flow.OnFailure(flow.Halt), flow.OnTimeout(flow.Continue)),
		"slow", RoutingSleep, "10s")
	var allowed *flow.AllowedFailure
	if err != nil && !errors.As(err, &allowed) {
		return "", err
	}
	res, err := ctx.Shell("slow-shell", activities.Shell{Command: "sleep 10", Timeout: time.Second}, once,
		flow.OnTimeout(flow.Fallback(activities.Shell{Command: "echo fallback ran"})))
	return res.Stdout, err
})

// QueueTimedOut holds the only activity slot of its worker with "hog" (a branch), then runs
// "queued", which cannot start before its QueueTimeout: it times out schedule to start and
// OnTimeout(Continue) lets it.
var QueueTimedOut = flow.Define("test.routing.queue", func(ctx *flow.Context, _ struct{}) (string, error) {
	hog := ctx.Go("hog", func(c *flow.Context) error {
		_, err := flow.Step[string](c, "hog", RoutingSleep, "6s")
		return err
	})
	if err := ctx.Sleep("let hog start", 2*time.Second); err != nil {
		return "", err
	}
	_, qerr := flow.Step[string](ctx.With(flow.QueueTimeout(time.Second), flow.OnTimeout(flow.Continue)), "queued", RoutingSleep, "0s")
	if _, err := hog.Get(ctx); err != nil {
		return "", err
	}
	return fmt.Sprint(qerr), nil
})

// Jittered runs Flaky with Temporal's retries (InitialInterval 1s, coefficient 2, three
// attempts): it fails twice and writes when each attempt started and failed to File.
var Jittered = flow.Define("test.routing.jitter", func(ctx *flow.Context, in FileInput) (string, error) {
	return flow.Step[string](ctx.With(flow.Retry(temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3})),
		"flaky", Flaky, in.File)
})

// RoutingSleep sleeps for d (a Go duration), or until its context ends. Register it on
// the worker that runs RoutedTimeouts and QueueTimedOut.
func RoutingSleep(ctx context.Context, d string) (string, error) {
	dur, err := time.ParseDuration(d)
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError("bad duration "+d, "BadDuration", err)
	}
	select {
	case <-time.After(dur):
		return "slept " + d, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// FlakyAttempt is one attempt of Flaky: its number, when the server started it and when
// it failed (zero for the attempt that succeeded).
type FlakyAttempt struct {
	Attempt int       `json:"attempt"`
	Started time.Time `json:"started"`
	Failed  time.Time `json:"failed"`
}

// Flaky fails its first two attempts with a plain Go error, appending each attempt to
// file (one JSON object a line).
func Flaky(ctx context.Context, file string) (string, error) {
	info := activity.GetInfo(ctx)
	a := FlakyAttempt{Attempt: int(info.Attempt), Started: info.StartedTime}
	var err error
	if a.Attempt < 3 {
		a.Failed = time.Now()
		err = errors.New("flaky: not yet")
	}
	b, merr := json.Marshal(a)
	if merr != nil {
		return "", merr
	}
	f, ferr := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr != nil {
		return "", ferr
	}
	_, werr := f.Write(append(b, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", werr
	}
	if err != nil {
		return "", err
	}
	return "done", nil
}
