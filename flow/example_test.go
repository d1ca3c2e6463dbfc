package flow_test

import (
	"fmt"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

type ReleaseInput struct {
	Version string   `json:"version"`
	Targets []string `json:"targets,omitempty"`
	DryRun  bool     `json:"dry_run"`
}

type ReleaseOutput struct {
	Log string `json:"log"`
}

func release(ctx *flow.Context, in ReleaseInput) (ReleaseOutput, error) {
	res, err := ctx.Shell("build", activities.Shell{Command: "make build VERSION=" + in.Version})
	if err != nil {
		return ReleaseOutput{}, err
	}
	return ReleaseOutput{Log: res.Stdout}, nil
}

func ExampleDefine() {
	release := flow.Define("release", release,
		flow.Description("Build, review and ship"), flow.Category("delivery/web"),
		flow.MaxCostUSD(decimal.RequireFromString("2.00")), flow.Version("3"))
	if err := release.Err(); err != nil {
		fmt.Println(err)
		return
	}
	info := release.Info()
	fmt.Println(info.Name)
	fmt.Println(info.InputType)
	fmt.Println(info.Description)
	fmt.Println(info.Category, info.Version, info.MaxCostUSD)
	// Output:
	// release
	// github.com/gateflow/gateflow/flow_test.ReleaseInput
	// Build, review and ship
	// delivery/web 3 2
}

func ExampleDefine_mistakes() {
	broken := flow.Define("bad name", release, flow.MaxCostUSD(decimal.NewFromInt(-1)))
	fmt.Println(broken.Err())
	// Output:
	// define bad name: flow name "bad name": want 1-200 letters, digits or _.-/ starting with a letter or digit
	// max cost -1 is negative
}

func ExampleFlow_Err() {
	fmt.Println(flow.Define("delivery/release", release).Err())
	fmt.Println(flow.Define("-oops", release).Err())
	// Output:
	// <nil>
	// define -oops: flow name "-oops": want 1-200 letters, digits or _.-/ starting with a letter or digit
}

func ExampleParseStatus() {
	s, err := runs.ParseStatus("awaiting_approval")
	fmt.Println(s, s.Terminal(), err)
	s, _ = runs.ParseStatus("completed")
	fmt.Println(s, s.Terminal())
	// Output:
	// awaiting_approval false <nil>
	// completed true
}

func ExampleNewWorker_validate() {
	hello := flow.Define("hello", release)
	w := flow.NewWorker(nil, flow.WorkerOptions{}, hello, hello)
	fmt.Println(w.TaskQueue())
	fmt.Println(w.Validate())
	// Output:
	// gateflow
	// flow hello is defined twice
}
