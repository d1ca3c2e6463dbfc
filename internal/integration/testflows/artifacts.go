package testflows

import (
	"encoding/json"
	"time"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// ArtifactFlows are the flows of the artifact tests, served by workers with a blob store.
func ArtifactFlows() []flow.Definition { return []flow.Definition{ArtifactHandoff, ArtifactMissing} }

// ArtifactInput is the content ArtifactHandoff's build step writes to dist/app.txt.
type ArtifactInput struct {
	Content string `json:"content"`
}

// ArtifactHandoff builds dist/app.txt (and dist/notes/readme.md) in step build, waits for
// the signal "go" (so a test can change workers in between), then prints the artifact in
// step use, placed under another path in a work directory of its own.
var ArtifactHandoff = flow.Define("test.artifacts.handoff", func(ctx *flow.Context, in ArtifactInput) (string, error) {
	if _, err := ctx.Shell("build", activities.Shell{
		Command: `mkdir -p dist/notes && printf '%s' "$CONTENT" > dist/app.txt && echo notes > dist/notes/readme.md`,
		Env:     map[string]string{"CONTENT": in.Content},
		Outputs: []string{"dist"},
	}); err != nil {
		return "", err
	}
	if _, err := flow.WaitSignal[json.RawMessage](ctx, "go", "", time.Minute); err != nil {
		return "", err
	}
	res, err := ctx.Shell("use", activities.Shell{
		Command: `cat in/app.txt`,
		Inputs:  []activities.ArtifactInput{{Step: "build", Name: "dist/app.txt", Path: "in/app.txt"}},
	})
	return res.Stdout, err
})

// ArtifactMissing asks for an artifact its build step did not produce: the use step fails
// before it is dispatched.
var ArtifactMissing = flow.Define("test.artifacts.missing", func(ctx *flow.Context, _ struct{}) (string, error) {
	if _, err := ctx.Shell("build", activities.Shell{Command: `echo hi > out.txt`, Outputs: []string{"out.txt"}}); err != nil {
		return "", err
	}
	res, err := ctx.Shell("use", activities.Shell{
		Command: `cat dist/app.txt`,
		Inputs:  []activities.ArtifactInput{{Step: "build", Name: "dist/app.txt"}},
	})
	return res.Stdout, err
})
