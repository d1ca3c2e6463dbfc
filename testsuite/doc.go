// Package testsuite is how users test their gateflow flows.
//
// Unit tests run a flow in Temporal's test environment (a mock clock, no server) with
// NewEnv: steps run for real unless mocked by step name (MockStep) or by activity
// (MockActivity), the agent provider answers from a script (ScriptAgent), and people act
// at given moments of virtual time (Approve, Reject, RequestChanges, Answer, Signal,
// RaiseBudget). Run returns a Result to assert on: status, steps in order, cost, votes.
//
// Replay tests (Replay, ReplayDir) replay recorded histories against the current code and
// fail on non-determinism, so a change that would break running workflows fails CI.
//
// Integration tests that need a real Temporal server use the subpackage testsuite/server,
// which embeds one (it links the Temporal server, so only the tests that import it pay
// for that).
package testsuite
