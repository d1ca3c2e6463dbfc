package examples

import (
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
)

// RolloutInput is the input of the rollout flow.
type RolloutInput struct {
	// Version is what to roll out. Required.
	Version string `json:"version"`
	// Regions are rolled out two at a time; default eu, us, ap.
	Regions []string `json:"regions,omitempty"`
}

// RolloutOutput is what the rollout flow returns.
type RolloutOutput struct {
	Version  string           `json:"version"`
	Regions  []string         `json:"regions"`
	SignOff  approval.Outcome `json:"sign_off"`
	Duration string           `json:"duration"`
}

// Rollout fans out over regions, two at a time: each region deploys and checks itself in
// a branch of its own. Meanwhile a second branch waits for a sign-off from group:release;
// the run ends when both are done. An Always step reports the outcome whatever it is.
var Rollout = flow.Define("rollout", rollout,
	flow.Description("Deploy to every region two at a time while release signs off"),
	flow.Category("delivery/web"),
	flow.Version("1"))

func rollout(ctx *flow.Context, in RolloutInput) (RolloutOutput, error) {
	if strings.TrimSpace(in.Version) == "" {
		return RolloutOutput{}, flow.Permanent(fmt.Errorf("version is required"))
	}
	regions := in.Regions
	if len(regions) == 0 {
		regions = []string{"eu", "us", "ap"}
	}
	start := ctx.Now()
	ctx.Always("report", activities.Shell{Command: "echo rollout of " + in.Version + " ended"})
	signOff := flow.Async(ctx, "sign-off", func(c *flow.Context) (approval.Outcome, error) {
		d, err := c.Approval("sign-off", approval.Request{
			Message:   "Sign off the rollout of " + in.Version + "?",
			Approvers: []string{"group:release"}, Required: 1, Timeout: 24 * time.Hour,
		})
		return d.Outcome, err
	})
	done, err := flow.ForEach(ctx, "regions", regions, func(c *flow.Context, _ int, region string) (string, error) {
		if _, err := c.Shell("deploy", activities.Shell{Command: fmt.Sprintf("echo deploying %s to %s; sleep 1", in.Version, region)}); err != nil {
			return "", err
		}
		check, err := c.Shell("check", activities.Shell{Command: "echo " + region + " healthy"})
		return strings.TrimSpace(check.Stdout), err
	}, flow.ForEachOptions{MaxParallel: 2, ItemName: func(i int) string { return regions[i] }})
	if err != nil {
		signOff.Cancel()
		return RolloutOutput{}, err
	}
	outcome, err := signOff.Get(ctx)
	if err != nil {
		return RolloutOutput{}, err
	}
	return RolloutOutput{Version: in.Version, Regions: done, SignOff: outcome, Duration: ctx.Now().Sub(start).String()}, nil
}
