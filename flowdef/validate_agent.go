package flowdef

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/core"
)

// The keys of an agent step's `with:`: what flowdef/interp decodes, nothing more. The
// loop keys (tools to on_limit) run the step as an agent loop (flow.Context.AgentLoop).
var (
	agentWithKeys = []string{"prompt", "system", "model", "provider", "max_tokens", "max_budget_usd",
		"tools", "max_turns", "max_loop_tokens", "messages", "context", "reads", "think", "on_limit",
		"max_loop_time", "approve", "approvers", "required", "approval_timeout", "on_approval_timeout"}
	agentToolKeys      = []string{"name", "description", "fatal", "action", "parameters", "shell", "http", "params", "approve", "input", "mcp", "tool", "flow"}
	agentShellToolKeys = []string{"command", "dir", "env", "timeout"}
	agentHTTPToolKeys  = []string{"method", "url", "headers", "timeout", "expect_status"}
	agentParamKeys     = []string{"name", "description", "required"}
	agentMessageKeys   = []string{"role", "text"}
)

var (
	toolNameRe  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	paramNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// agentWith checks the `with:` of a `uses: agent` step: known keys only (with "did you
// mean"), values of the types the interpreter decodes, and the loop's settings and tools.
// Strings may be templates (${{ ... }}), checked elsewhere; a template stands for any type.
func (k *check) agentWith(n *Node, lb string) {
	if n.Uses != "agent" || n.With == nil {
		return
	}
	w := withCheck{k: k, n: n, lb: lb}
	w.keys("with", n.With, agentWithKeys)
	for _, key := range []string{"prompt", "system", "model", "provider"} {
		w.str("with."+key, n.With[key])
	}
	for _, key := range []string{"max_tokens", "max_turns", "max_loop_tokens"} {
		w.count("with."+key, n.With[key])
	}
	switch v := n.With["max_budget_usd"].(type) {
	case nil:
	case string:
		if !isTemplate(v) {
			k.money(w.at("with.max_budget_usd"), lb+": with.max_budget_usd", v)
		}
	default:
		w.add("with.max_budget_usd", hintMoney, "want a string, got %s", yamlKind(v))
	}
	w.boolean("with.think", n.With["think"])
	w.loopTime(n.With["max_loop_time"]) // validate_agent_time.go
	if s, ok := n.With["on_limit"].(string); ok && !isTemplate(s) {
		k.enum(w.at("with.on_limit"), lb+": with.on_limit", s, "answer", "fail")
	} else {
		w.str("with.on_limit", n.With["on_limit"])
	}
	w.strings("with.context", n.With["context"])
	w.reads(n.With["reads"]) // validate_agent_mcp.go: values, or MCP resources
	w.messages(n.With["messages"])
	tools, _ := n.With["tools"].([]any)
	if think, _ := n.With["think"].(bool); think && len(tools) > 0 {
		k.add(w.at("with.tools"), "a think step answers in JSON without tools: drop think or the tools",
			"%s: with.tools: think takes no tools", lb)
	}
	w.tools(n.With["tools"])
	w.agentApprovals(agentToolNames(n.With["tools"])) // validate_agent_approve.go
}

// withCheck checks the generic values of one node's `with:`, each at its position.
type withCheck struct {
	k  *check
	n  *Node
	lb string
}

// at is the position of the value at path (with.tools[0].name), else of `with:`.
func (w withCheck) at(path string) Pos {
	return w.n.Fields.At(path, w.n.Fields.At("with", w.n.Pos))
}

func (w withCheck) add(path, hint, format string, args ...any) {
	w.k.add(w.at(path), hint, "%s: %s: "+format, append([]any{w.lb, path}, args...)...)
}

// keys refuses the keys of m that are not in known, naming the closest known one.
func (w withCheck) keys(path string, m map[string]any, known []string) {
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, key) {
			w.k.add(w.at(path+"."+key), suggest(key, known), "%s: unknown field '%s' in %s", w.lb, key, path)
		}
	}
}

// mapping is v as a mapping, or nil after reporting what it is.
func (w withCheck) mapping(path string, v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		w.add(path, "write a mapping of keys to values", "want a mapping, got %s", yamlKind(v))
	}
	return m
}

// list is v as a list (nil, false when absent), reporting anything else.
func (w withCheck) list(path string, v any) ([]any, bool) {
	if v == nil {
		return nil, false
	}
	l, ok := v.([]any)
	if !ok {
		w.add(path, "write a list", "want a list, got %s", yamlKind(v))
	}
	return l, ok
}

func (w withCheck) str(path string, v any) {
	if _, ok := v.(string); v != nil && !ok {
		w.add(path, "quote it", "want a string, got %s", yamlKind(v))
	}
}

// strings checks a string or a list of strings.
func (w withCheck) strings(path string, v any) {
	if _, ok := v.(string); ok {
		return
	}
	l, _ := w.list(path, v)
	for i, e := range l {
		w.str(fmt.Sprintf("%s[%d]", path, i), e)
	}
}

func (w withCheck) boolean(path string, v any) {
	switch t := v.(type) {
	case nil, bool:
	case string:
		if !isTemplate(t) {
			w.add(path, "write true or false", "want a boolean, got a string")
		}
	default:
		w.add(path, "write true or false", "want a boolean, got %s", yamlKind(v))
	}
}

// count checks a limit: a whole number, not negative (zero: the default), or a template.
func (w withCheck) count(path string, v any) {
	var f float64
	switch t := v.(type) {
	case nil:
		return
	case string:
		if !isTemplate(t) {
			w.add(path, "write a whole number such as 10", "want an integer, got a string")
		}
		return
	case int:
		f = float64(t)
	case int64:
		f = float64(t)
	case float64:
		f = t
	default:
		w.add(path, "write a whole number such as 10", "want an integer, got %s", yamlKind(v))
		return
	}
	switch {
	case f != math.Trunc(f):
		w.add(path, "write a whole number such as 10", "want an integer, got %v", f)
	case f < 0:
		w.add(path, "use a positive number (0 means the default)", "must not be negative (got %v)", f)
	}
}

// each calls fn with the path and mapping of each element of the list v (at path),
// after refusing the keys not in keys.
func (w withCheck) each(path string, v any, keys []string, fn func(p string, m map[string]any)) {
	l, _ := w.list(path, v)
	for i, e := range l {
		p := fmt.Sprintf("%s[%d]", path, i)
		if m := w.mapping(p, e); m != nil {
			w.keys(p, m, keys)
			fn(p, m)
		}
	}
}

// messages checks seed messages: [{role: user|assistant, text: ...}].
func (w withCheck) messages(v any) {
	w.each("with.messages", v, agentMessageKeys, func(path string, m map[string]any) {
		switch role, _ := m["role"].(string); role {
		case "user", "assistant":
		case "":
			w.add(path, "add role: user or role: assistant", "a message needs a role")
		default:
			w.add(path+".role", "one of: user, assistant", "unknown role '%s'", role)
		}
		w.str(path+".text", m["text"])
	})
}

func isTemplate(s string) bool { return strings.Contains(s, "${{") }

// tools checks an agent step's tools: each an action or a shell template, named once.
func (w withCheck) tools(v any) {
	seen := map[string]string{}
	w.each("with.tools", v, agentToolKeys, func(path string, m map[string]any) {
		for _, key := range []string{"name", "description", "action"} {
			w.str(path+"."+key, m[key])
		}
		w.boolean(path+".fatal", m["fatal"])
		name := w.tool(path, m)
		switch {
		case name == "" || isTemplate(name):
		case !toolNameRe.MatchString(name):
			w.add(path+".name", "letters, digits, '_' and '-', at most 64", "bad tool name '%s'", name)
		case seen[name] != "":
			w.add(path+".name", "give each tool its own name", "tool '%s' is already %s", name, seen[name])
		default:
			seen[name] = path
		}
	})
}

// agentToolKinds are the keys that say what a tool runs, one per tool.
var agentToolKinds = []string{"action", "shell", "http", "input", "mcp", "flow"}

// tool checks one tool's kind (action, shell or http) and returns its name.
func (w withCheck) tool(path string, m map[string]any) string {
	name, _ := m["name"].(string)
	var kinds []string
	for _, k := range agentToolKinds {
		if _, ok := m[k]; ok {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) != 1 {
		w.add(path, "give action: <a registered action>, shell: {command: ...}, http: {url: ...}, input: {prompt: ...}, mcp: <server> with tool: <name>, or flow: <a flow>",
			"a tool needs exactly one of %s", strings.Join(agentToolKinds, ", "))
		return name
	}
	if kinds[0] == "input" {
		return w.inputTool(path, m) // validate_agent_approve.go
	}
	if n, ok := w.extTool(path, kinds[0], name, m); ok { // validate_agent_mcp.go: mcp and flow tools
		return n
	}
	if kinds[0] == "action" {
		if _, ok := m["params"]; ok {
			w.add(path+".params", "an action tool takes parameters: (a JSON Schema)", "params is for shell and http tools")
		}
		action, _ := m["action"].(string)
		w.action(path, action, m["parameters"])
		return cmp.Or(name, action)
	}
	if _, ok := m["parameters"]; ok {
		w.add(path+".parameters", "a shell or http tool declares params: [{name, description, required}]", "parameters is for action tools")
	}
	if name == "" {
		w.add(path, "add name: <the tool's name as the model sees it>", "%s tool needs a name", toolKind(kinds[0]))
	}
	w.template(path, kinds[0], m[kinds[0]])
	w.params(path, m["params"])
	return name
}

// action checks an action tool: a registered action, and its parameters' JSON Schema.
func (w withCheck) action(path, action string, params any) {
	switch {
	case action == "" || isTemplate(action):
		w.add(path+".action", "name a registered action", "want an action name")
	case slices.Contains(core.BuiltinActions, action):
		w.add(path+".action", "declare a shell tool with shell: {command: ...}", "'%s' is not a registered action", action)
	case !w.k.v.reg.HasAction(action):
		w.add(path+".action", fmt.Sprintf("register an action named %s on the worker (flow.Worker.RegisterActivity)", action),
			"no registered action '%s'", action)
	}
	w.toolParameters(path, params)
}

// template checks a shell or http tool's step template.
func (w withCheck) template(path, kind string, v any) {
	m := w.mapping(path+"."+kind, v)
	if m == nil {
		return
	}
	main := "command"
	if kind == "http" {
		main = "url"
		w.keys(path+".http", m, agentHTTPToolKeys)
		w.str(path+".http.method", m["method"])
		if l, ok := w.list(path+".http.expect_status", m["expect_status"]); ok {
			for i, e := range l {
				w.count(fmt.Sprintf("%s.http.expect_status[%d]", path, i), e)
			}
		}
	} else {
		w.keys(path+".shell", m, agentShellToolKeys)
		w.str(path+".shell.dir", m["dir"])
	}
	if c, _ := m[main].(string); strings.TrimSpace(c) == "" {
		w.add(path+"."+kind, "add "+main+": ...", "%s tool needs a %s", toolKind(kind), main)
	}
	if t, ok := m["timeout"].(string); ok && !isTemplate(t) {
		w.k.duration(w.at(path+"."+kind+".timeout"), w.lb+": "+path+"."+kind+".timeout", t)
	}
}

// params checks the params a shell or http tool declares.
func (w withCheck) params(path string, params any) {
	seen := map[string]bool{}
	w.each(path+".params", params, agentParamKeys, func(p string, m map[string]any) {
		w.str(p+".description", m["description"])
		w.boolean(p+".required", m["required"])
		name, _ := m["name"].(string)
		switch {
		case !paramNameRe.MatchString(name):
			w.add(p+".name", "a letter or '_', then letters, digits and '_'", "bad parameter name '%s'", name)
		case seen[name]:
			w.add(p+".name", "declare each parameter once", "parameter '%s' is declared twice", name)
		}
		seen[name] = true
	})
}

// schemaJSON is a decoded mapping as JSON (values decoded from YAML always encode).
func schemaJSON(m map[string]any) json.RawMessage {
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// toolKind is "a shell", "an http".
func toolKind(kind string) string {
	if kind == "http" {
		return "an " + kind
	}
	return "a " + kind
}
