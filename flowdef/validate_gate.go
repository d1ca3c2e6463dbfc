package flowdef

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
)

// Approval gate deadlines (gate.on_timeout), as approval.OnTimeout.
const (
	GateOnTimeoutReject  = string(approval.RejectOnTimeout)
	GateOnTimeoutApprove = string(approval.ApproveOnTimeout)
	GateOnTimeoutFail    = string(approval.FailOnTimeout)
)

// gateFields are the keys of a gate mapping each gate type takes besides type: a key of
// another type is an error, never ignored.
var gateFields = map[string][]string{
	GateApproval: {"prompt", "approvers", "required", "on_timeout"},
	GateInput:    {"prompt", "approvers", "schema"},
	GateSignal:   {"signal", "key"},
	GatePoll:     {"resolver", "params", "poll_interval", "allow_manual"},
	GateQuality:  {"source", "threshold", "on_fail"},
}

// gateTypes lists the gate types in messages.
const gateTypes = "approval, input, signal, poll, quality"

func (k *check) gate(n *Node, vis []string, c ctx) {
	lb, g := label(n), n.Gate
	if g == nil {
		k.add(n.Fields.At("gate", n.Pos), "give type: "+gateTypes, "%s: empty gate", lb)
		return
	}
	k.gateKeys(g, lb)
	k.template(g.Fields.At("prompt", g.Pos), lb+": prompt", g.Prompt, vis, c)
	switch g.Type {
	case GateApproval:
		k.approvalGate(n, vis, c)
	case GateInput:
		if g.Schema.IsZero() {
			k.add(g.Pos, "add schema: (a JSON Schema of the answer)", "%s: input gate needs schema", lb)
		}
		k.schema(g.Schema, lb+": schema")
		k.approvers(g, lb, vis, c)
	case GateSignal:
		if g.Signal == "" {
			k.add(g.Pos, "add signal: <name>", "%s: signal gate needs signal", lb)
		}
		k.template(g.Fields.At("key", g.Pos), lb+": key", g.Key, vis, c)
	case GatePoll:
		k.pollGate(g, lb, vis, c)
	case GateQuality:
		switch {
		case g.Source == "":
			k.add(g.Pos, "add source: <id of the step whose output is scored>", "%s: quality gate needs source", lb)
		case !slices.Contains(vis, g.Source):
			k.add(g.Fields.At("source", g.Pos), "the source must be a step that ran before the gate on every path", "%s: source '%s' is not a step that has run here", lb, g.Source)
		}
		if g.Threshold < 0 || g.Threshold > 100 {
			k.add(g.Fields.At("threshold", g.Pos), "a score out of 100, e.g. 80", "%s: threshold %g out of range", lb, g.Threshold)
		}
		k.enum(g.Fields.At("on_fail", g.Pos), lb+": on_fail", g.OnFail, ActionFail, ActionContinue)
	case "":
		k.add(g.Pos, "one of: "+gateTypes, "%s: gate needs type", lb)
	default:
		k.add(g.Fields.At("type", g.Pos), "one of: "+gateTypes+" (a custom resolver is type: poll with resolver: <name>)", "%s: unknown gate type '%s'", lb, g.Type)
	}
}

// gateKeys refuses the keys written on a gate that its type does not take.
func (k *check) gateKeys(g *Gate, lb string) {
	allowed, known := gateFields[g.Type]
	if !known {
		return // the type itself is reported
	}
	keys := make([]string, 0, len(g.Fields))
	for key := range g.Fields {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, func(a, b string) int {
		pa, pb := g.Fields[a], g.Fields[b]
		if pa.Line != pb.Line {
			return pa.Line - pb.Line
		}
		return pa.Col - pb.Col
	})
	for _, key := range keys {
		if key == "type" || slices.Contains(allowed, key) || !isGateKey(key) {
			continue // unknown keys are Parse's
		}
		var owners []string
		for _, t := range strings.Split(gateTypes, ", ") {
			if slices.Contains(gateFields[t], key) {
				owners = append(owners, t)
			}
		}
		k.add(g.Fields.At(key, g.Pos), fmt.Sprintf("%s gates take %s; %s belongs to %s gates", g.Type, strings.Join(allowed, ", "), key, strings.Join(owners, ", ")),
			"%s: field '%s' is not valid on %s %s gate", lb, key, article(g.Type), g.Type)
	}
}

// article is "an" before approval and input, "a" before the other gate types.
func article(gateType string) string {
	if gateType == GateApproval || gateType == GateInput {
		return "an"
	}
	return "a"
}

// isGateKey reports whether key is a field of Gate (not a nested path such as params.x).
func isGateKey(key string) bool {
	for _, fields := range gateFields {
		if slices.Contains(fields, key) {
			return true
		}
	}
	return false
}

// approvalGate checks an approval gate as approval.Request.Validate would: the quorum,
// the deadline's action and the approvers.
func (k *check) approvalGate(n *Node, vis []string, c ctx) {
	lb, g := label(n), n.Gate
	if g.Fields.Has("required") && g.Required < 1 {
		k.add(g.Fields.At("required", g.Pos), "the number of distinct people who must approve, e.g. 2", "%s: required must be at least 1 (got %d)", lb, g.Required)
	}
	p := g.Fields.At("on_timeout", g.Pos)
	k.enum(p, lb+": gate on_timeout", g.OnTimeout, GateOnTimeoutReject, GateOnTimeoutApprove, GateOnTimeoutFail)
	switch {
	case g.OnTimeout == "":
	case n.Timeout == "":
		k.add(p, "add timeout: to the node (the gate's deadline)", "%s: gate on_timeout without timeout", lb)
	case n.OnTimeout != nil && g.OnTimeout != GateOnTimeoutReject:
		k.add(n.OnTimeout.Pos, "the node's on_timeout routes a rejected deadline only: drop it, or use gate on_timeout: reject",
			"%s: on_timeout never applies: the gate's on_timeout is %s", lb, g.OnTimeout)
	}
	literal := k.approvers(g, lb, vis, c)
	if literal && g.Required > 1 {
		req := approval.Request{Approvers: g.Approvers, Required: g.Required}
		if err := req.Validate(); err != nil {
			k.add(g.Fields.At("required", g.Pos), "list at least as many approvers as required, or use a group", "%s: %v", lb, err)
		}
	}
}

// approvers checks each approver entry: a template (checked as one), or a user or
// "group:" name as approval.Request takes it. It reports whether every entry is literal.
func (k *check) approvers(g *Gate, lb string, vis []string, c ctx) bool {
	p := g.Fields.At("approvers", g.Pos)
	literal := true
	for i, a := range g.Approvers {
		field := fmt.Sprintf("%s: approvers[%d]", lb, i)
		if strings.Contains(a, "${{") {
			literal = false
			k.template(p, field, a, vis, c)
			continue
		}
		if err := (approval.Request{Approvers: []string{a}}).Validate(); err != nil {
			k.add(p, `a user name ("alice"), a group ("group:release") or a template ("${{ inputs.owner }}")`, "%s: %v", field, err)
		}
	}
	return literal
}

// pollGate checks a poll gate: a known resolver, its params and interval.
func (k *check) pollGate(g *Gate, lb string, vis []string, c ctx) {
	switch {
	case g.Resolver == "":
		k.add(g.Pos, "add resolver: http, command or a registered type", "%s: poll gate needs resolver", lb)
	case slices.Contains(core.BuiltinGateResolvers, g.Resolver), k.v.reg.HasGateType(g.Resolver):
	default:
		k.add(g.Fields.At("resolver", g.Pos), fmt.Sprintf("register a gate resolver of type %s on the worker (flow.WorkerOptions.GateResolvers)", g.Resolver), "%s: no registered gate resolver '%s'", lb, g.Resolver)
	}
	k.templates(g.Fields, g.Pos, lb+": ", "params", mapAny(g.Params), vis, c)
	k.duration(g.Fields.At("poll_interval", g.Pos), lb+": poll_interval", g.PollInterval)
}
