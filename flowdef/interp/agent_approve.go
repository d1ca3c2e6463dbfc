package interp

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/signals"
)

// agentApproveWith are the people keys of an agent step's `with:`: the tools that wait for
// approval and their gates' defaults (flowdef validates the same keys).
type agentApproveWith struct {
	Approve           []string `json:"approve"`
	Approvers         any      `json:"approvers"`
	Required          int      `json:"required"`
	ApprovalTimeout   string   `json:"approval_timeout"`
	OnApprovalTimeout string   `json:"on_approval_timeout"`
}

// agentToolPeopleWith are a tool's people keys: its own approve (true, false or a gate's
// fields), or the input tool it is.
type agentToolPeopleWith struct {
	Approve any             `json:"approve"`
	Input   *agentInputWith `json:"input"`
}

type agentInputWith struct {
	Prompt    string         `json:"prompt"`
	Approvers any            `json:"approvers"`
	Timeout   string         `json:"timeout"`
	Schema    map[string]any `json:"schema"`
}

type agentGateWith struct {
	Approvers any    `json:"approvers"`
	Required  int    `json:"required"`
	Timeout   string `json:"timeout"`
	OnTimeout string `json:"on_timeout"`
	Message   string `json:"message"`
}

// inputTool makes an input tool (flow.InputTool), named ask_human unless named.
func inputTool(t agentToolWith, opts []flow.ToolOption) (flow.Tool, error) {
	in := t.Input
	req := signals.InputRequest{Prompt: in.Prompt, Assignees: people(in.Approvers)}
	var err error
	if req.Timeout, err = optDuration(in.Timeout); err != nil {
		return flow.Tool{}, fmt.Errorf("input.timeout: %w", err)
	}
	if in.Schema != nil {
		if req.Schema, err = json.Marshal(in.Schema); err != nil {
			return flow.Tool{}, fmt.Errorf("input.schema: %w", err)
		}
	}
	name := t.Name
	if name == "" {
		name = flowdef.DefaultInputToolName
	}
	return flow.InputTool(name, req, opts...), nil
}

// approveTools makes the tools that need approval wait for it: those named in approve
// and those whose own approve is true or a mapping (its fields over the step's defaults).
func (w agentWith) approveTools(tools []flow.Tool) error {
	for _, name := range w.Approve {
		if !slices.ContainsFunc(tools, func(t flow.Tool) bool { return t.Name == name }) {
			return fmt.Errorf("with.approve: no tool %q in this step", name)
		}
	}
	for i := range tools {
		req, ok, err := w.toolApproval(w.Tools[i], tools[i].Name)
		if err != nil {
			return fmt.Errorf("with.tools[%d].approve: %w", i, err)
		}
		if ok {
			flow.ToolApproval(req)(&tools[i])
		}
	}
	return nil
}

// toolApproval is the gate request of the tool named name, and whether it needs one.
func (w agentWith) toolApproval(t agentToolWith, name string) (approval.Request, bool, error) {
	req := approval.Request{Approvers: people(w.Approvers), Required: w.Required, OnTimeout: approval.OnTimeout(w.OnApprovalTimeout)}
	var err error
	if req.Timeout, err = optDuration(w.ApprovalTimeout); err != nil {
		return req, false, err
	}
	listed := slices.Contains(w.Approve, name)
	switch v := t.Approve.(type) {
	case nil:
		return req, listed, nil
	case bool:
		return req, v || listed, nil
	case map[string]any:
		var g agentGateWith
		raw, _ := json.Marshal(v)
		if err := json.Unmarshal(raw, &g); err != nil {
			return req, false, err
		}
		if a := people(g.Approvers); a != nil {
			req.Approvers = a
		}
		if g.Required != 0 {
			req.Required = g.Required
		}
		if g.OnTimeout != "" {
			req.OnTimeout = approval.OnTimeout(g.OnTimeout)
		}
		if g.Timeout != "" {
			if req.Timeout, err = optDuration(g.Timeout); err != nil {
				return req, false, err
			}
		}
		req.Message = g.Message
		return req, true, nil
	}
	return req, false, fmt.Errorf("want true, false or a mapping, got %T", t.Approve)
}

// people is a rendered approvers value: a list whose elements are names or lists of
// names (a template giving a list adds each element), or one name.
func people(v any) []string {
	var out []string
	var add func(any)
	add = func(v any) {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, e := range t {
				add(e)
			}
		case []string:
			out = append(out, t...)
		}
	}
	add(v)
	return out
}
