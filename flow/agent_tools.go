package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/typeschema"
)

// Tool is a tool an agent loop (Context.AgentLoop) grants its model: a name, a
// description, the JSON Schema of its arguments, and Run, which runs one call as a step.
// ActivityTool makes one from a registered activity; other tool sources (MCP servers,
// step templates) make theirs the same way.
type Tool struct {
	// Name is the tool's name as the model sees it: letters, digits, '_' and '-'.
	Name string
	// Description tells the model what the tool does and when to call it.
	Description string
	// Parameters is the JSON Schema (an object schema) of the call's arguments.
	Parameters json.RawMessage
	// Fatal makes a failure of the tool fail the agent step; otherwise the failure goes
	// back to the model as the tool's result and the loop goes on.
	Fatal bool
	// Run runs one call with the model's arguments as the step named step of ctx, and
	// returns the text the model receives. Arguments that do not fit the tool are a
	// *toolArgumentsError (always sent back to the model, even for a fatal tool).
	Run func(ctx *Context, step string, args json.RawMessage) (string, error)
	// err is what is wrong with the tool as made: the agent step fails before any turn.
	err error
	// approval, when set (ToolApproval), is the gate each call waits at before it runs.
	approval *approval.Request
	// check, when set, checks arguments as Run decodes them (an approver's edits).
	check func(json.RawMessage) error
	// mcp is the MCP tool it calls (MCPTool; agent_mcp.go), nil for other tools.
	mcp *mcpToolRef
	// child marks a FlowTool: its child run's cap is what the loop's cost cap leaves.
	child bool
}

// ToolOption configures a tool made by ActivityTool.
type ToolOption func(*Tool)

// ToolDescription sets the tool's description, which the model reads.
func ToolDescription(text string) ToolOption { return func(t *Tool) { t.Description = text } }

// ToolFatal makes a failure of the tool fail the agent step instead of going back to
// the model.
func ToolFatal() ToolOption { return func(t *Tool) { t.Fatal = true } }

// toolArgumentsError is a tool call whose arguments do not fit the tool: the model gets
// the message back and may call again.
type toolArgumentsError struct {
	Tool string
	Err  error
}

// Error implements error.
func (e *toolArgumentsError) Error() string {
	return fmt.Sprintf("tool %s: bad arguments: %v", e.Tool, e.Err)
}

// Unwrap returns the decoding error.
func (e *toolArgumentsError) Unwrap() error { return e.Err }

// ActivityTool is a tool that runs a registered activity as a step, the activity given as
// a function or by its registered name. A function takes an optional context.Context and
// at most one more parameter: the tool's arguments, whose JSON Schema comes from its Go
// type (internal/typeschema) and onto which the model's arguments are decoded strictly
// (an unknown member is a *toolArgumentsError). An activity given by name receives the
// arguments as JSON; set their schema in the tool's Parameters. The model receives the
// activity's result as JSON.
func ActivityTool(name string, activity any, opts ...ToolOption) Tool {
	param, perr := toolParam(activity)
	t := Tool{Name: name, err: perr}
	if perr == nil && param != nil {
		t.Parameters = toolSchema(param)
	}
	if perr == nil && param == nil && reflect.TypeOf(activity).Kind() == reflect.Func {
		t.Parameters = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	}
	for _, o := range opts {
		if o != nil {
			o(&t)
		}
	}
	if len(t.Parameters) == 0 {
		t.Parameters = json.RawMessage(`{"type":"object"}`)
	}
	if perr == nil {
		t.check = func(raw json.RawMessage) error { _, err := toolArgs(name, param, activity, raw); return err }
	}
	t.Run = func(ctx *Context, step string, raw json.RawMessage) (string, error) {
		args, err := toolArgs(name, param, activity, raw)
		if err != nil {
			return "", err
		}
		return runActivityTool(ctx, step, activity, args)
	}
	return t
}

// toolSchema is the JSON Schema of arguments of type t (typeschema.For), its root an
// object and not also null: providers want the parameters of a tool to be an object.
func toolSchema(t reflect.Type) json.RawMessage {
	doc := typeschema.For(t)
	var m map[string]any
	if json.Unmarshal(doc, &m) != nil {
		return doc
	}
	if types, ok := m["type"].([]any); ok && slices.Contains(types, any("object")) {
		m["type"] = "object"
	}
	out, err := json.Marshal(m)
	if err != nil {
		return doc
	}
	return out
}

// runActivityTool runs the activity as the step named step and returns its result as
// JSON. The result is decoded into the activity's own result type, so one that reports
// its cost or tokens (activities.CostReporter, TokenReporter) is charged like any step.
func runActivityTool(ctx *Context, step string, activity any, args []any) (string, error) {
	res := reflect.New(reflect.TypeFor[json.RawMessage]())
	if ft := reflect.TypeOf(activity); ft.Kind() == reflect.Func && ft.NumOut() == 2 {
		res = reflect.New(ft.Out(0))
	}
	p := ctx.dispatch(activityCall(ctx, step, activity, args))
	if err := ctx.settle(p, res.Interface(), func() outcome { return describeAny(res.Elem().Interface()) }); err != nil {
		return "", err
	}
	if ft := reflect.TypeOf(activity); ft.Kind() == reflect.Func && ft.NumOut() == 1 {
		return "done", nil // an activity that returns only an error
	}
	out, err := json.Marshal(res.Elem().Interface())
	if err != nil {
		return "", fmt.Errorf("tool %s: result: %w", step, err)
	}
	return string(out), nil
}

// toolParam is the arguments' type of an activity function (nil when it takes none, or
// for an activity given by name).
func toolParam(activity any) (reflect.Type, error) {
	ft := reflect.TypeOf(activity)
	if ft == nil || ft.Kind() != reflect.Func {
		if _, ok := activity.(string); ok {
			return nil, nil
		}
		return nil, fmt.Errorf("tool activity %v is neither a function nor a name", activity)
	}
	n := ft.NumIn()
	first := 0
	if n > 0 && ft.In(0) == contextType {
		first = 1
	}
	switch {
	case ft.IsVariadic() || n-first > 1:
		return nil, fmt.Errorf("tool activity %s must take at most one parameter (after a context), it takes %d", activityName(activity), n-first)
	case n-first == 0:
		return nil, nil
	}
	return ft.In(first), nil
}

// toolArgs decodes the model's arguments for the activity: strictly onto its parameter
// type, as JSON for an activity given by name, nothing for one without parameters.
func toolArgs(name string, param reflect.Type, activity any, raw json.RawMessage) ([]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if param == nil {
		if _, byName := activity.(string); byName {
			return []any{raw}, nil
		}
		if !bytes.Equal(bytes.TrimSpace(raw), []byte("{}")) {
			return nil, &toolArgumentsError{Tool: name, Err: errors.New("the tool takes no arguments")}
		}
		return nil, nil
	}
	v := reflect.New(param)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		return nil, &toolArgumentsError{Tool: name, Err: err}
	}
	if dec.More() {
		return nil, &toolArgumentsError{Tool: name, Err: errors.New("more than one JSON value")}
	}
	return []any{v.Elem().Interface()}, nil
}

// llmTools is the tools as the model sees them, checked: each has a name, a Run and a
// name used once. The turn's own validation (llm.Request.Validate) checks the rest.
func llmTools(tools []Tool) ([]llm.Tool, error) {
	out := make([]llm.Tool, len(tools))
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("agent: tool %d has no name", i+1)
		case seen[t.Name]:
			return nil, fmt.Errorf("agent: tool %q is granted twice", t.Name)
		case t.Run == nil:
			return nil, fmt.Errorf("agent: tool %q has no Run", t.Name)
		case t.err != nil:
			return nil, fmt.Errorf("agent: tool %q: %w", t.Name, t.err)
		}
		seen[t.Name] = true
		out[i] = llm.Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out, nil
}
