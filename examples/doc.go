// Package examples holds the example flows that flow-worker serves by default: the demo
// of `make run` and the flows the documentation walks through.
//
//   - hello: two shell steps, the second using the first's output.
//   - release: a shell build, parallel checks, an HTTP health check, an AI review that
//     costs money (the scripted provider answers) and the smoke flow as a child run.
//   - smoke: two shell steps; release runs it as a child.
//   - ship: release notes (human input with a JSON Schema), an approval by two of
//     group:release (request-changes loops back), then a keyed signal from the deploy.
//   - rollout: a fan-out over regions two at a time (flow.ForEach), a branch waiting for a
//     sign-off (flow.Async with an approval inside), and an Always step.
//   - triage-agent: an agent loop (flow.Context.AgentLoop) with the tools of the MCP server
//     mcp/triage-tools (restart_service after an approval), a shell and an HTTP tool.
//
// The directory flows/ holds declarative definitions (package flowdef) that
// `flow-worker --dev` serves too: code-review (a fan-out of agent reviews, a quality gate,
// an approval by group:release), incident (an agent triage routed by a switch) and
// triage-agent-yaml (the triage agent as a definition). ScriptedRules answers their agent
// steps, the agent loops' tool calls included.
package examples

import "github.com/gateflow/gateflow/flow"

// All returns every example flow, for flow.NewWorker.
func All() []flow.Definition {
	return []flow.Definition{Hello, Release, Smoke, Ship, Rollout, TriageAgent}
}
