package flow

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/internal/toolname"
)

// FlowTool is a tool that runs the defined flow f as a child run (Child) for the step
// named after the tool, nested under the agent step: the child gets the run's guards, its
// cap is the lower of what the run's cap and the loop's MaxBudgetUSD leave, and its cost
// and tokens count for the loop and the run. The
// tool's name is the flow's name made model-safe (every character but letters, digits,
// '_' and '-' becomes '_'; set Tool.Name for another), its description the flow's
// Description unless ToolDescription gives one, and its parameters the JSON Schema of I
// (internal/typeschema, as for ActivityTool), which must be an object (a struct or a
// map). The model's arguments are decoded strictly onto I (an unknown member is a tool
// error the model sees) and it receives the child's output as JSON.
func FlowTool[I, O any](f *Flow[I, O], opts ...ToolOption) Tool {
	if f == nil {
		return Tool{Name: "flow", err: fmt.Errorf("flow tool: the flow is nil")}
	}
	param := reflect.TypeFor[I]()
	t := Tool{Name: toolname.From(f.Name()), Description: f.info.Description, err: f.Err(), child: true}
	if t.Description == "" {
		t.Description = "Runs the flow " + f.Name() + " and returns its output."
	}
	if t.err == nil {
		t.Parameters, t.err = flowToolSchema(param)
	}
	for _, o := range opts {
		if o != nil {
			o(&t)
		}
	}
	name := t.Name
	t.check = func(raw json.RawMessage) error { _, err := toolArgs(name, param, nil, raw); return err }
	t.Run = func(ctx *Context, step string, raw json.RawMessage) (string, error) {
		args, err := toolArgs(name, param, nil, raw)
		if err != nil {
			return "", err
		}
		in, _ := args[0].(I) // toolArgs decoded onto I
		out, err := Child(ctx, step, f, in)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return "", fmt.Errorf("flow tool %s: output: %w", name, err)
		}
		return string(b), nil
	}
	return t
}

// flowToolSchema is the tool schema of a flow's input type t: an object schema, else an
// error (a model's tool arguments are an object).
func flowToolSchema(t reflect.Type) (json.RawMessage, error) {
	doc := toolSchema(t)
	var m struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(doc, &m); err != nil || m.Type != "object" {
		return nil, fmt.Errorf("flow tool: the input type %s is not a JSON object (want a struct or a map)", t)
	}
	return doc, nil
}

// toolContext is the context the tool call of t runs in: a FlowTool's child gets what the
// loop's MaxBudgetUSD leaves as its CostLimit (Child then caps it at the lower of that and
// what the run's cap leaves), so a child cannot spend past the loop's cap.
func (l *agentRun) toolContext(ctx *Context, t Tool) *Context {
	if !t.child || !l.a.MaxBudgetUSD.IsPositive() {
		return ctx
	}
	return ctx.With(CostLimit(decimal.Max(l.left(), decimal.Zero)))
}
