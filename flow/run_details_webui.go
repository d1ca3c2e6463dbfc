package flow

import (
	"encoding/json"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The Web UI part of the current details: for each open gate and input, the Update and
// the JSON to paste into the UI's "Send an Update" dialog, and what identity such a
// decision has. The payloads are the real wire types marshalled, so they cannot drift
// from what the handlers decode.

// uiLinePrefix starts every Web UI line of the details (a nested list item).
const uiLinePrefix = "  - Web UI: "

// uiIdentityNote says what a decision sent from the Web UI counts as. The UI sends no
// gateflow signature or token, so it is what flowctl without --signing-key sends.
const uiIdentityNote = "From the Web UI (*Send an Update*): put your name in `by` (empty is refused). " +
	"The UI sends no gateflow signature, so the decision counts as **unverified**, by the name you type, " +
	"like `flowctl` without `--signing-key`; a worker that requires signed decisions refuses it, " +
	"and so does a dev server with `--auth`, where the Web UI may not decide."

// uiSignedOnlyNote replaces uiIdentityNote in runs that accept signed decisions only.
const uiSignedOnlyNote = "This run accepts signed decisions only: a decision sent from the Web UI has no signature " +
	"and is refused; decide with `flowctl ... --signing-key FILE`."

// uiVoteLine is the Web UI line for the gate name: the Update and its payload. A polled
// gate (manual decision) takes approve or reject only.
func uiVoteLine(name string, polled bool) string {
	kinds := "`approve`, `reject` or `request_changes`, which needs a `comment`"
	if polled {
		kinds = "`approve` or `reject`"
	}
	return uiLinePrefix + "*Send an Update* `" + protocol.UpdateApproval + "` with `" +
		uiPayload(approval.Vote{Gate: name, Kind: approval.Approve}) + "` (vote: " + kinds + ")"
}

// uiAnswerLine is the Web UI line for the input name.
func uiAnswerLine(name string) string {
	return uiLinePrefix + "*Send an Update* `" + protocol.UpdateInput + "` with `" +
		uiPayload(protocol.InputAnswer{Name: name, Data: json.RawMessage(`{}`)}) + "` (data: your answer, as its schema asks)"
}

// uiPayload is v as compact JSON; the wire types always marshal.
func uiPayload(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return strings.ReplaceAll(string(b), "`", `\u0060`) // keep the inline code span whole
}

// flowctl's defaults, which its commands in the details leave out (internal/connect).
const defaultNamespace = "default"

// connFlags are the flowctl connection flags the run's commands need: its namespace and
// task queue when they are not flowctl's defaults. The server address is the caller's
// (the run does not know how people reach it).
func (rt *runner) connFlags() string {
	var flags []string
	if ns := workflow.GetInfo(rt.root).Namespace; ns != "" && ns != defaultNamespace {
		flags = append(flags, "--namespace "+ns)
	}
	if rt.setup.baseQueue != "" && rt.setup.baseQueue != core.DefaultTaskQueue {
		flags = append(flags, "--task-queue "+rt.setup.baseQueue)
	}
	return strings.Join(flags, " ")
}

// withConn puts the connection flags conn after "flowctl" in cmd.
func withConn(cmd, conn string) string {
	rest, ok := strings.CutPrefix(cmd, "flowctl ")
	if conn == "" || !ok {
		return cmd
	}
	return "flowctl " + conn + " " + rest
}
