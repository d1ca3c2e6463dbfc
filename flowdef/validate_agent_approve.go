package flowdef

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/approval"
)

// The keys of an agent step's `with:` for people in the loop: the tools that wait for
// approval (approve) and their gates' defaults (approvers, required, approval_timeout,
// on_approval_timeout), a tool's own approve (true, or a mapping of the gate's fields),
// and the keys of an input tool (input: {...}).
var (
	agentApproveWithKeys = []string{"approve", "approvers", "required", "approval_timeout", "on_approval_timeout"}
	agentApproveKeys     = []string{"approvers", "required", "timeout", "on_timeout", "message"}
	agentInputToolKeys   = []string{"prompt", "approvers", "timeout", "schema"}
)

// DefaultInputToolName is the name of an agent step's input tool (`- input: {...}`) that
// gives none.
const DefaultInputToolName = "ask_human"

// agentApprovals checks the people keys of an agent step's `with:`: approve names tools the
// step has (not on think), approvers are users or groups, required and the deadline fit,
// and each tool's own approve is true, false or a gate's fields.
func (w withCheck) agentApprovals(names map[string]bool) {
	with := w.n.With
	w.approversList("with.approvers", with["approvers"])
	w.count("with.required", with["required"])
	if s, ok := with["approval_timeout"].(string); ok && !isTemplate(s) {
		w.k.duration(w.at("with.approval_timeout"), w.lb+": with.approval_timeout", s)
	} else {
		w.str("with.approval_timeout", with["approval_timeout"])
	}
	w.onTimeout("with.on_approval_timeout", with["on_approval_timeout"])
	think, _ := with["think"].(bool)
	list, _ := w.list("with.approve", with["approve"])
	for i, e := range list {
		p := fmt.Sprintf("with.approve[%d]", i)
		name, ok := e.(string)
		switch {
		case !ok:
			w.add(p, "name a tool of the step", "want a tool name, got %s", yamlKind(e))
		case isTemplate(name):
		case think:
			w.add(p, "a think step has no tools to approve: drop approve", "think takes no tools, so no tool '%s' to approve", name)
		case !names[name]:
			w.add(p, "one of the step's tools: "+toolList(names), "no tool '%s' in this step", name)
		}
	}
	tools, _ := with["tools"].([]any)
	for i, t := range tools {
		m, _ := t.(map[string]any)
		if v, ok := m["approve"]; ok {
			w.toolApprove(fmt.Sprintf("with.tools[%d].approve", i), v)
		}
	}
}

// toolApprove checks one tool's approve: true, false, or {approvers, required, timeout,
// on_timeout, message}.
func (w withCheck) toolApprove(path string, v any) {
	switch t := v.(type) {
	case bool:
		return
	case string:
		if isTemplate(t) {
			return
		}
	case map[string]any:
		w.keys(path, t, agentApproveKeys)
		w.approversList(path+".approvers", t["approvers"])
		w.count(path+".required", t["required"])
		w.str(path+".message", t["message"])
		if s, ok := t["timeout"].(string); ok && !isTemplate(s) {
			w.k.duration(w.at(path+".timeout"), w.lb+": "+path+".timeout", s)
		} else {
			w.str(path+".timeout", t["timeout"])
		}
		w.onTimeout(path+".on_timeout", t["on_timeout"])
		return
	}
	w.add(path, "write true, or {approvers: [...], required: N, timeout: 1h, on_timeout: reject}", "want true, false or a mapping, got %s", yamlKind(v))
}

func (w withCheck) onTimeout(path string, v any) {
	if s, ok := v.(string); ok && !isTemplate(s) {
		w.k.enum(w.at(path), w.lb+": "+path, s, string(approval.RejectOnTimeout), string(approval.ApproveOnTimeout), string(approval.FailOnTimeout))
		return
	}
	w.str(path, v)
}

// approversList checks approvers: a list of user names, "group:<name>" entries or templates.
func (w withCheck) approversList(path string, v any) {
	list, _ := w.list(path, v)
	for i, e := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		s, ok := e.(string)
		if !ok {
			w.str(p, e)
			continue
		}
		if isTemplate(s) {
			continue
		}
		if err := (approval.Request{Approvers: []string{s}}).Validate(); err != nil {
			w.add(p, "a user name or group:<name>", "%v", err)
		}
	}
}

// inputTool checks an input tool (`input: {prompt, approvers, timeout, schema}`) and
// returns its name.
func (w withCheck) inputTool(path string, m map[string]any) string {
	for _, key := range []string{"parameters", "params"} {
		if _, ok := m[key]; ok {
			w.add(path+"."+key, "an input tool's one parameter is the model's question", "%s is not for input tools", key)
		}
	}
	if _, ok := m["approve"]; ok {
		w.add(path+".approve", "an input tool asks people already", "approve is not for input tools")
	}
	in := w.mapping(path+".input", m["input"])
	if in != nil {
		w.keys(path+".input", in, agentInputToolKeys)
		w.str(path+".input.prompt", in["prompt"])
		w.approversList(path+".input.approvers", in["approvers"])
		if s, ok := in["timeout"].(string); ok && !isTemplate(s) {
			w.k.duration(w.at(path+".input.timeout"), w.lb+": "+path+".input.timeout", s)
		} else {
			w.str(path+".input.timeout", in["timeout"])
		}
		if s, ok := in["schema"].(map[string]any); ok {
			w.k.schema(Schema{Pos: w.at(path + ".input.schema"), JSON: schemaJSON(s)}, w.lb+": "+path+".input.schema")
		} else if in["schema"] != nil {
			w.add(path+".input.schema", "a JSON Schema mapping", "want a mapping, got %s", yamlKind(in["schema"]))
		}
	}
	name, _ := m["name"].(string)
	if name == "" {
		return DefaultInputToolName
	}
	return name
}

// agentToolNames are the names of the step's tools as the model sees them (templated
// names left out).
func agentToolNames(tools any) map[string]bool {
	out := map[string]bool{}
	list, _ := tools.([]any)
	for _, t := range list {
		m, _ := t.(map[string]any)
		name, _ := m["name"].(string)
		if name == "" {
			name, _ = m["action"].(string)
		}
		if _, ok := m["input"]; ok && name == "" {
			name = DefaultInputToolName
		}
		if name == "" {
			name = extToolName(m) // validate_agent_mcp.go: an mcp or flow tool's derived name
		}
		if name != "" && !isTemplate(name) {
			out[name] = true
		}
	}
	return out
}

func toolList(names map[string]bool) string {
	if len(names) == 0 {
		return "none"
	}
	var l []string
	for n := range names {
		l = append(l, n)
	}
	slices.Sort(l)
	return strings.Join(l, ", ")
}
