package testflows

import (
	"fmt"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// FanoutFlows are the flows of the fan-out tests.
func FanoutFlows() []flow.Definition {
	return []flow.Definition{Fanout, FanoutMany, Doubler, BranchGate, RaceShell}
}

// FanoutInput configures Fanout: one shell command per item, logging to File.
type FanoutInput struct {
	File     string              `json:"file"`
	Commands []string            `json:"commands"`
	Max      int                 `json:"max"`
	Policy   flow.ItemFailPolicy `json:"policy"`
}

// Fanout runs each command as the item's step "run", at most Max at once; each item logs
// "start N" and "end N" to File around its command.
var Fanout = flow.Define("test.fanout", func(ctx *flow.Context, in FanoutInput) ([]string, error) {
	return flow.ForEach(ctx, "items", in.Commands, func(c *flow.Context, i int, cmd string) (string, error) {
		sh := fmt.Sprintf("echo start %d >> %s; %s; rc=$?; echo end %d >> %s; exit $rc", i, in.File, cmd, i, in.File)
		r, err := c.Shell("run", activities.Shell{Command: sh})
		return r.Stdout, err
	}, flow.ForEachOptions{MaxParallel: in.Max, OnItemFail: in.Policy})
}, flow.WithGuards(flow.Guards{MaxFanOut: 5000}))

// Doubler is the child of FanoutMany: no steps, its input doubled.
var Doubler = flow.Define("test.doubler", func(ctx *flow.Context, n int) (int, error) { return 2 * n, nil })

// FanoutMany runs Doubler once per input as child runs, 200 at a time.
var FanoutMany = flow.Define("test.fanout.many", func(ctx *flow.Context, in []int) (int, error) {
	out, err := flow.ForEachChild(ctx, "double", Doubler, in, flow.ForEachOptions{MaxParallel: 200})
	sum := 0
	for _, n := range out {
		sum += n
	}
	return sum, err
}, flow.WithGuards(flow.Guards{MaxFanOut: 5000}))

// BranchGate waits for the approval "ship" in a branch while it runs two shell steps;
// it returns the gate's outcome.
var BranchGate = flow.Define("test.branch.gate", func(ctx *flow.Context, in FileInput) (string, error) {
	gate := flow.Async(ctx, "review", func(c *flow.Context) (approval.Outcome, error) {
		d, err := c.Approval("ship", approval.Request{Message: "Ship?", Approvers: []string{"alice"}, Required: 1})
		return d.Outcome, err
	})
	for _, step := range []string{"build", "test"} {
		if _, err := ctx.Shell(step, activities.Shell{Command: "echo " + step + " >> " + in.File}); err != nil {
			return "", err
		}
	}
	outcome, err := gate.Get(ctx)
	return string(outcome), err
})

// RaceShell races a slow shell step (which writes its PID to File) against a fast one.
var RaceShell = flow.Define("test.race", func(ctx *flow.Context, in FileInput) (int, error) {
	i, _, err := flow.Race(ctx, "first",
		func(c *flow.Context) (activities.ShellResult, error) {
			return c.Shell("slow", activities.Shell{Command: "echo $$ > " + in.File + "; exec sleep 60"})
		},
		func(c *flow.Context) (activities.ShellResult, error) {
			return c.Shell("fast", activities.Shell{Command: "sleep 1"})
		})
	return i, err
})
