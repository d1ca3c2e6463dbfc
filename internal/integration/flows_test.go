package integration

import (
	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// failing runs a step that writes to stderr and exits 3.
var failing = flow.Define("test.failing", func(ctx *flow.Context, _ struct{}) (string, error) {
	if _, err := ctx.Shell("prepare", activities.Shell{Command: "echo ready"}); err != nil {
		return "", err
	}
	_, err := ctx.Shell("explode", activities.Shell{Command: "echo starting; echo 'disk full: cannot write /tmp/x' >&2; exit 3"})
	return "unreachable", err
})

func testFlows() []flow.Definition { return []flow.Definition{failing} }
