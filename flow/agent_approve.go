package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/signals"
)

// ToolApproval makes every call of the tool wait for people's approval before it runs.
// The agent loop opens an approval gate named after the call's step, "<agent>/<tool>"
// ("<agent>/<tool>#2" for the tool's second call that waits, and so on), recorded as the
// step approve-<tool> nested under the agent step. Its Details show the tool, its
// arguments (pretty JSON) and the model's reason (the text of the turn that made the
// call); approvers, quorum, timeout and on-timeout come from req, and signed decisions
// are checked as at any gate. An empty req.Message becomes one made from the tool and its
// arguments.
//
// Approved, the tool runs. An approval may carry edited arguments (approval.Vote.Arguments,
// `flowctl approve RUN GATE --arguments JSON`): they are checked against the tool's JSON
// Schema (and the tool's own decoding) when the vote arrives, a vote whose edits do not
// fit is refused and leaves no trace, and the tool runs with the edits of the last
// approval that made some; the approval step's record says who edited them, and the
// model is told. Rejected, timed out with reject, or changes requested: the tool does not
// run and the model gets a tool error saying who refused it and why; the loop goes on. A
// deadline with OnTimeout fail fails the agent step.
func ToolApproval(req approval.Request) ToolOption {
	return func(t *Tool) {
		r := req
		r.Approvers = append([]string(nil), req.Approvers...)
		t.approval = &r
	}
}

// toolGate is what people decided about one tool call: the arguments to run it with and
// a note for the model (edited arguments), or the result the model gets instead of a run,
// or the error that fails the agent step.
type toolGate struct {
	args   json.RawMessage
	note   string
	result *llm.Message
	err    error
}

func (g toolGate) resultOr() llm.Message {
	if g.result == nil {
		return llm.Message{}
	}
	return *g.result
}

// approveCall asks people about the call tc of the tool t when t needs approval (else the
// call goes ahead with the model's arguments).
func (l *agentRun) approveCall(ctx *Context, t Tool, tc llm.ToolCall) toolGate {
	if t.approval == nil {
		return toolGate{args: tc.Arguments}
	}
	args := bytes.TrimSpace(tc.Arguments)
	if len(args) == 0 {
		args = []byte("{}")
	}
	if !json.Valid(args) {
		msg := llm.ToolResult(tc.ID, fmt.Sprintf("tool %s: bad arguments: not JSON; nothing was asked of people and the tool did not run", t.Name), true)
		return toolGate{result: &msg}
	}
	gate := l.gateName(ctx, t.Name)
	req := toolRequest(*t.approval, t, args, l.reason())
	d, err := ctx.approvalGate("approve-"+t.Name, gate, req, editsCheck(t))
	switch {
	case err == nil:
		g := toolGate{args: args}
		if edited, by, ok := d.EditedArguments(); ok {
			g.args = edited
			g.note = fmt.Sprintf("\n\n(%s edited the arguments before the call; the tool ran with %s)", by, compactJSON(edited))
		}
		return g
	case d.Outcome == "" || d.FailRun:
		return toolGate{err: err} // the gate could not open, the wait was cancelled, or its deadline fails the run
	}
	msg := llm.ToolResult(tc.ID, refusal(t.Name, d), true)
	return toolGate{result: &msg}
}

// gateName is the name of the gate of the tool's next call: "<agent>/<tool>", then
// "<agent>/<tool>#2" and so on, skipping names the run has used (an earlier loop of the
// same name, an earlier run attempt).
func (l *agentRun) gateName(ctx *Context, tool string) string {
	if l.gateUses == nil {
		l.gateUses = map[string]int{}
	}
	for {
		l.gateUses[tool]++
		gate := ctx.scope + "/" + tool
		if n := l.gateUses[tool]; n > 1 {
			gate = fmt.Sprintf("%s#%d", gate, n)
		}
		if _, used := ctx.run.people.gates[gate]; !used {
			return gate
		}
	}
}

// reason is the model's text in the turn whose calls are running: the last assistant
// message of the conversation.
func (l *agentRun) reason() string {
	for i := len(l.msgs) - 1; i >= 0; i-- {
		if l.msgs[i].Role == llm.RoleAssistant {
			return strings.TrimSpace(l.msgs[i].Text)
		}
	}
	return ""
}

// toolRequest is the gate's request for a call of t with args: req with the call, its
// message (made when empty) and its details.
func toolRequest(req approval.Request, t Tool, args json.RawMessage, reason string) approval.Request {
	req.Tool = &approval.ToolCall{Name: t.Name, Arguments: compactJSON(args), Reason: reason, Parameters: t.Parameters}
	if strings.TrimSpace(req.Message) == "" {
		req.Message = fmt.Sprintf("Run tool %s with %s?", t.Name, display.Preview(string(compactJSON(args)), 200))
	}
	var b strings.Builder
	if d := strings.TrimSpace(req.Details); d != "" {
		b.WriteString(d + "\n\n")
	}
	fmt.Fprintf(&b, "**Tool** `%s`\n\n**Arguments**\n\n```json\n%s\n```\n", t.Name, prettyJSON(args))
	if reason != "" {
		b.WriteString("\n**The model's reason**\n\n> " + strings.ReplaceAll(reason, "\n", "\n> ") + "\n")
	}
	b.WriteString("\nApprove to run it (an approval may carry edited arguments: `--arguments JSON`), or reject to tell the model no.")
	req.Details = b.String()
	return req
}

// refusal is what the model is told when people did not let the call of tool run.
func refusal(tool string, d approval.Decision) string {
	why := ""
	switch {
	case d.Outcome == approval.TimedOut || d.Expired:
		why = "nobody approved it in time (the approval timed out)"
	case d.Outcome == approval.ChangesRequested:
		why = d.By + " asked for changes"
	default:
		why = d.By + " rejected it"
	}
	if d.Comment != "" {
		why += ": " + d.Comment
	}
	return fmt.Sprintf("The call of tool %s was refused by people and did not run: %s.", tool, why)
}

// editsCheck checks an approver's edited arguments for t: they must fit the tool's JSON
// Schema and decode the way the tool decodes its arguments.
func editsCheck(t Tool) func(json.RawMessage) error {
	schema, serr := signals.CompileSchema(t.Parameters)
	return func(raw json.RawMessage) error {
		if serr == nil && schema != nil {
			if err := schema.Validate(raw); err != nil {
				return err
			}
		}
		if t.check != nil {
			var argErr *toolArgumentsError
			if err := t.check(raw); errors.As(err, &argErr) {
				return argErr.Err
			} else if err != nil {
				return err
			}
		}
		return nil
	}
}

// checkEditsWith makes the votes at the gate named gate have their edited arguments
// checked by check (nil: the gate is no tool call's).
func (p *peoplePart) checkEditsWith(gate string, check func(json.RawMessage) error) {
	if check == nil {
		return
	}
	if p.edits == nil {
		p.edits = map[string]func(json.RawMessage) error{}
	}
	p.edits[gate] = check
}

// checkEdits refuses a vote at the open gate g whose edited arguments do not fit the tool.
func (p *peoplePart) checkEdits(g *approval.Gate, v approval.Vote) error {
	check := p.edits[g.Name]
	if !v.HasArguments() || check == nil {
		return nil
	}
	if err := check(v.Arguments); err != nil {
		return &approval.VoteError{Gate: g.Name, By: strings.TrimSpace(v.By), Code: approval.CodeBadArguments,
			Reason: fmt.Sprintf("%s's edited arguments do not fit tool %s: %v", strings.TrimSpace(v.By), g.Request.Tool.Name, err), Err: err}
	}
	return nil
}

// earlyEdits is votes kept before the gate g opened without those whose edited arguments
// do not fit its tool: those are kept on the gate as refused.
func (p *peoplePart) earlyEdits(g *approval.Gate, votes []approval.Vote) []approval.Vote {
	out := votes[:0:0]
	for _, v := range votes {
		if err := p.checkEdits(g, v); err != nil {
			g.Refused = append(g.Refused, approval.RefusedVote{Vote: v, Code: approval.CodeBadArguments, Reason: err.Error()})
			continue
		}
		out = append(out, v)
	}
	return out
}

// compactJSON is raw without insignificant white space (raw itself when it is not JSON).
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// prettyJSON is raw indented for people.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
