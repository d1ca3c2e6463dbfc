package examples

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/signals"
)

// ShipInput is the input of the ship flow.
type ShipInput struct {
	// Version is the version to ship. Required.
	Version string `json:"version"`
}

// ReleaseNotes is the human input the ship flow asks for.
type ReleaseNotes struct {
	Summary string `json:"summary"`
	Risk    string `json:"risk"`
}

// releaseNotesSchema is the JSON Schema an answer must match.
var releaseNotesSchema = json.RawMessage(`{
  "type": "object",
  "required": ["summary", "risk"],
  "properties": {
    "summary": {"type": "string", "minLength": 10},
    "risk": {"enum": ["low", "medium", "high"]}
  },
  "additionalProperties": false
}`)

// DeployDone is the signal the deploy system sends when a version is live.
type DeployDone struct {
	Environment string `json:"environment"`
	URL         string `json:"url"`
}

// ShipOutput is what the ship flow returns.
type ShipOutput struct {
	Version  string            `json:"version"`
	Notes    ReleaseNotes      `json:"notes"`
	Decision approval.Decision `json:"decision"`
	Rounds   int               `json:"rounds"`
	Deployed DeployDone        `json:"deployed"`
}

// Ship puts people in the loop: someone in group:release writes release notes (an input
// checked against a JSON Schema), two of them approve (a quorum; "request changes" sends
// the notes back for another round), then the run waits for the deploy system's keyed
// signal deploy-done for this version.
var Ship = flow.Define("ship", ship,
	flow.Description("Release notes, two approvals, then wait for the deploy"),
	flow.Category("delivery/web"),
	flow.Version("1"))

func ship(ctx *flow.Context, in ShipInput) (ShipOutput, error) {
	out := ShipOutput{Version: in.Version}
	if strings.TrimSpace(in.Version) == "" {
		return out, flow.Permanent(errors.New("ship: version is required"))
	}
	prompt := "Release notes for " + in.Version
	for {
		out.Rounds++
		notes, err := flow.Input[ReleaseNotes](ctx, "release-notes", signals.InputRequest{
			Prompt: prompt, Schema: releaseNotesSchema, Assignees: []string{"group:release"}, Timeout: 24 * time.Hour,
		})
		if err != nil {
			return out, err
		}
		out.Notes = notes
		d, err := ctx.Approval("ship", approval.Request{
			Message:   fmt.Sprintf("Ship %s? Risk: %s", in.Version, notes.Risk),
			Details:   notes.Summary,
			Approvers: []string{"group:release"},
			Required:  2,
			Timeout:   24 * time.Hour,
			OnTimeout: approval.RejectOnTimeout,
		})
		out.Decision = d
		var changes *approval.ChangesRequestedError
		if errors.As(err, &changes) {
			prompt = fmt.Sprintf("Release notes for %s (changes requested by %s: %s)", in.Version, d.By, changes.Comment())
			continue
		}
		if err != nil {
			return out, err
		}
		break
	}
	done, err := flow.WaitSignal[DeployDone](ctx, "deploy-done", in.Version, 24*time.Hour)
	if err != nil {
		return out, err
	}
	out.Deployed = done
	return out, nil
}

// Directory is the group directory of the examples: group:release is alice, bob and carol.
func Directory() approval.StaticDirectory {
	return approval.StaticDirectory{"release": {"alice", "bob", "carol"}}
}
