package protocol

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
)

// TriggerStartActivity starts a run triggered by the end of another run (flow.OnRunOf):
// the ended run's wrapper runs it once per triggered flow, with a TriggerStart.
const TriggerStartActivity = "gateflow.trigger.start"

// TriggerStart is the input of TriggerStartActivity: which flow to start, with which
// workflow ID and input, and the run whose end triggered it.
type TriggerStart struct {
	// Flow is the triggered flow; ID its run's deterministic workflow ID (TriggeredID).
	Flow string `json:"flow"`
	ID   string `json:"id"`
	// Input is the ended run's output (JSON).
	Input json.RawMessage `json:"input"`
	// By is the ended run: its flow, workflow ID, run ID and outcome ("completed", "failed").
	ByFlow  string `json:"by_flow"`
	ByID    string `json:"by_id"`
	ByRunID string `json:"by_run_id"`
	Outcome string `json:"outcome"`
}

// safeID is what a readable start ID looks like: printable ASCII without spaces (the
// Temporal client sends the ID in a request header, where control characters and other
// Unicode fail with a raw transport error), not starting with "/", at most 400
// characters (the rule of core.StartOptions.ID, which also needs printable ASCII).
var safeID = regexp.MustCompile(`^[!-.0-~][!-~]{0,399}$`)

// readable returns prefix+tail when that is a safe ID, else prefix and a hash of tail, or,
// when the prefix itself is not fit for an ID (too long, not printable ASCII: flow names
// are checked elsewhere, but this must hold for any input), a hash of both.
func readable(prefix, tail string) string {
	if id := prefix + tail; safeID.MatchString(id) {
		return id
	}
	sum := sha256.Sum256([]byte(tail))
	if id := prefix + "h-" + hex.EncodeToString(sum[:12]); safeID.MatchString(id) {
		return id
	}
	all := sha256.Sum256([]byte(prefix + "\x00" + tail))
	return "gateflow-h-" + hex.EncodeToString(all[:16])
}

// OnceID is the workflow ID of the once start (flow.Once) of a flow on a task queue: the
// same for every worker of the queue, so the flow is started once.
func OnceID(flow, queue string) string { return readable("once:", flow+"@"+queue) }

// TriggeredID is the workflow ID of the run of flow that the end of run (workflow ID id,
// run ID runID) starts: a retried or replayed trigger finds the run it started.
func TriggeredID(flow, id, runID string) string {
	return readable(strings.ReplaceAll(flow, "/", "-")+"/triggered-by/", id+"/"+runID)
}

// SignalStartID is the workflow ID of the run of flow that signal name with key starts
// (flow.OnSignal): signals with the same key reach the same run.
func SignalStartID(flow, name, key string) string {
	return readable(strings.ReplaceAll(flow, "/", "-")+"/on-signal/", name+"/"+key)
}
