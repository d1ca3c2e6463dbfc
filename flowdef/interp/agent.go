package interp

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/expr"
)

// agentWith is an agent step's rendered `with:` (flowdef validates the same keys). The
// keys after MaxBudgetUSD make the step an agent loop (flow.Context.AgentLoop).
type agentWith struct {
	Prompt       string `json:"prompt"`
	System       string `json:"system"`
	Model        string `json:"model"`
	Provider     string `json:"provider"`
	MaxTokens    int    `json:"max_tokens"`
	MaxBudgetUSD string `json:"max_budget_usd"`

	Tools         []agentToolWith    `json:"tools"`
	MaxTurns      int                `json:"max_turns"`
	MaxLoopTokens int64              `json:"max_loop_tokens"`
	Messages      []agentMessageWith `json:"messages"`
	// Context is a string or a list of strings: seed user messages.
	Context any `json:"context"`
	// Reads is a value or a list of values: each a seed user message (JSON unless a string).
	Reads   any    `json:"reads"`
	Think   bool   `json:"think"`
	OnLimit string `json:"on_limit"`
	// MaxLoopTime is a duration (flowdef.ParseDuration); empty means none.
	MaxLoopTime string `json:"max_loop_time"`
	agentApproveWith
}

// loop reports whether a loop key is set.
func (w agentWith) loop() bool {
	return len(w.Tools) > 0 || w.MaxTurns != 0 || w.MaxLoopTokens != 0 || len(w.Messages) > 0 ||
		w.Context != nil || w.Reads != nil || w.Think || w.OnLimit != "" || w.MaxLoopTime != ""
}

type agentMessageWith struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// agentToolWith is one tool: a registered action (Action, Parameters) or a shell step
// template (Shell, Params) or an http step template (HTTP, Params).
type agentToolWith struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Fatal       bool                 `json:"fatal"`
	Action      string               `json:"action"`
	Parameters  map[string]any       `json:"parameters"`
	Shell       *shellCommandWith    `json:"shell"`
	HTTP        *agentHTTPToolWith   `json:"http"`
	Params      []agentToolParamWith `json:"params"`
	agentToolPeopleWith
	// MCP and Tool: a tool of an MCP server; Flow: a flow run as a child (agent_mcp.go).
	MCP  string `json:"mcp"`
	Tool string `json:"tool"`
	Flow string `json:"flow"`
}

type agentHTTPToolWith struct {
	Method       string            `json:"method"`
	URL          string            `json:"url"`
	Headers      map[string]string `json:"headers"`
	Timeout      string            `json:"timeout"`
	ExpectStatus []int             `json:"expect_status"`
}

type agentToolParamWith struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// agentSpec decodes an agent step's rendered `with:`: the agent, and the loop when a loop
// key is set (nil otherwise: the step is one gateflow.agent activity, as it always was).
func (r *runner) agentSpec(n *flowdef.Node, with map[string]any) (activities.Agent, *flow.AgentLoop, error) {
	var w agentWith
	if err := decodeWith(n, with, &w); err != nil {
		return activities.Agent{}, nil, err
	}
	a := activities.Agent{Prompt: w.Prompt, System: w.System, Model: w.Model, Provider: w.Provider, MaxTokens: w.MaxTokens}
	if a.Model == "" {
		a.Model = r.opts.model
	}
	if w.MaxBudgetUSD != "" {
		var err error
		if a.MaxBudgetUSD, err = decimal.NewFromString(w.MaxBudgetUSD); err != nil {
			return a, nil, fmt.Errorf("with.max_budget_usd: %w", err)
		}
	}
	if !n.OutputSchema.IsZero() {
		a.ResponseSchema = n.OutputSchema.JSON
	}
	if !w.loop() {
		return a, nil, nil
	}
	l := &flow.AgentLoop{Agent: a, MaxTurns: w.MaxTurns, MaxLoopTokens: w.MaxLoopTokens, Think: w.Think}
	switch w.OnLimit {
	case "", "fail":
	case "answer":
		l.AnswerOnLimit = true
	default:
		return a, nil, fmt.Errorf("with.on_limit: unknown value %q (answer or fail)", w.OnLimit)
	}
	var err error
	if l.MaxLoopTime, err = loopTime(w.MaxLoopTime); err != nil { // agent_time.go
		return a, nil, err
	}
	if l.Messages, err = seedMessages(w); err != nil {
		return a, nil, err
	}
	if l.Reads, err = mcpReads(w.Reads); err != nil { // agent_mcp.go
		return a, nil, err
	}
	for i, t := range w.Tools {
		tool, err := r.toolOf(t) // agent_mcp.go: mcp and flow tools, else agentTool
		if err != nil {
			return a, nil, fmt.Errorf("with.tools[%d]: %w", i, err)
		}
		l.Tools = append(l.Tools, tool)
	}
	if err := w.approveTools(l.Tools); err != nil { // agent_approve.go
		return a, nil, err
	}
	return a, l, nil
}

// seedMessages are the loop's seed messages after the prompt: context, reads, messages.
func seedMessages(w agentWith) ([]llm.Message, error) {
	var out []llm.Message
	for _, v := range listOf(w.Context) {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("with.context: want strings, got %T", v)
		}
		out = append(out, llm.UserMessage(s))
	}
	for _, v := range listOf(w.Reads) {
		if _, mcp := mcpReadOf(v); mcp {
			continue // an MCP resource, read by the loop (mcpReads)
		}
		s, ok := v.(string)
		if !ok {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("with.reads: %w", err)
			}
			s = string(b)
		}
		out = append(out, llm.UserMessage(s))
	}
	for i, m := range w.Messages {
		role := llm.Role(m.Role)
		if role != llm.RoleUser && role != llm.RoleAssistant {
			return nil, fmt.Errorf("with.messages[%d]: unknown role %q (user or assistant)", i, m.Role)
		}
		out = append(out, llm.Message{Role: role, Text: m.Text})
	}
	return out, nil
}

// listOf is v as a list: v itself when it is one, nothing for nil, else [v].
func listOf(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return t
	}
	return []any{v}
}

// agentTool makes one tool: an action tool (flow.ActivityTool over the action's name),
// a shell tool (flow.ShellTool) or an http tool (flow.HTTPTool).
func agentTool(t agentToolWith) (flow.Tool, error) {
	var opts []flow.ToolOption
	if t.Description != "" {
		opts = append(opts, flow.ToolDescription(t.Description))
	}
	if t.Fatal {
		opts = append(opts, flow.ToolFatal())
	}
	params := make([]flow.ToolParam, len(t.Params))
	for i, p := range t.Params {
		params[i] = flow.ToolParam{Name: p.Name, Description: p.Description, Required: p.Required}
	}
	switch {
	case t.Input != nil:
		return inputTool(t, opts) // agent_approve.go
	case t.Shell != nil:
		d, err := optDuration(t.Shell.Timeout)
		if err != nil {
			return flow.Tool{}, fmt.Errorf("shell.timeout: %w", err)
		}
		sh := activities.Shell{Command: t.Shell.Command, Dir: t.Shell.Dir, Env: t.Shell.Env, Timeout: d}
		return flow.ShellTool(t.Name, sh, params, opts...), nil
	case t.HTTP != nil:
		d, err := optDuration(t.HTTP.Timeout)
		if err != nil {
			return flow.Tool{}, fmt.Errorf("http.timeout: %w", err)
		}
		h := activities.HTTP{Method: t.HTTP.Method, URL: t.HTTP.URL, Headers: t.HTTP.Headers, Timeout: d, ExpectStatus: t.HTTP.ExpectStatus}
		return flow.HTTPTool(t.Name, h, params, opts...), nil
	}
	tool := flow.ActivityTool(cmp.Or(t.Name, t.Action), t.Action, opts...)
	if t.Parameters != nil {
		schema, err := json.Marshal(t.Parameters)
		if err != nil {
			return flow.Tool{}, fmt.Errorf("parameters: %w", err)
		}
		tool.Parameters = schema
	}
	return tool, nil
}

// agentStep runs a `uses: agent` step: ctx.Agent, or ctx.AgentLoop when a loop key is
// set. Its output is the final answer: the text (decoded when it is JSON), or the JSON
// answer when output_schema is set.
func (r *runner) agentStep(ctx *flow.Context, f *frame, n *flowdef.Node) (expr.StepResult, error) {
	with, err := r.ev.valueMap(f, n.With)
	if err != nil {
		return expr.StepResult{}, fmt.Errorf("%s: with: %w", n.Fields.At("with", n.Pos), err)
	}
	a, loop, err := r.agentSpec(n, with)
	if err != nil {
		return expr.StepResult{}, err
	}
	opts, err := r.allStepOptions(f, n)
	if err != nil {
		return expr.StepResult{}, err
	}
	var res activities.AgentResult
	if loop == nil {
		res, err = ctx.Agent(name(n), a, opts...)
	} else {
		var lr flow.AgentLoopResult
		lr, err = ctx.AgentLoop(name(n), *loop, opts...)
		res = lr.AgentResult
	}
	if err != nil {
		return expr.StepResult{}, err
	}
	out := textOutput(res.Text)
	if len(res.JSON) > 0 {
		out = jsonValue(res.JSON)
	}
	return expr.StepResult{Output: out, CostUSD: res.CostUSD.InexactFloat64()}, nil
}
