package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/runs"
)

// DefinitionFlowName is the workflow type of DefinitionFlow: the one flow that runs any
// declarative definition carried in its input (`flowctl start --file`).
const DefinitionFlowName = "gateflow.definition"

// DefinitionInput is the input of DefinitionFlow: a definition's canonical JSON
// (flowdef.Definition.Canonical) and the run's inputs. The run is pinned by content: the
// definition is part of the run's recorded input, so every replay runs the same one.
type DefinitionInput struct {
	// Definition is the definition to run, as JSON (its canonical form, or any JSON or
	// YAML flowdef.Parse reads).
	Definition json.RawMessage `json:"definition"`
	// Hash, when set, must be the definition's flowdef hash: a guard against a definition
	// altered between the client's validation and the start.
	Hash string `json:"hash,omitempty"`
	// Inputs are the run's inputs (`inputs.*`), checked against the definition's schema.
	Inputs map[string]any `json:"inputs,omitempty"`
}

// NewDefinitionInput is the DefinitionInput that runs def with inputs.
func NewDefinitionInput(def *flowdef.Definition, inputs map[string]any) DefinitionInput {
	return DefinitionInput{Definition: def.Canonical(), Hash: def.Hash(), Inputs: inputs}
}

// DefinitionFlow is the flow DefinitionFlowName that runs the definition its input carries
// (see DefinitionInput) with the same interpreter as Flow. Every worker serving definitions
// registers it, so a client may run a definition no worker loaded; the client validates it
// against the task queue's registry first (flowclient.Client.Registry), the run fails at once,
// permanently, when the definition does not parse, its hash differs or the inputs do not
// match its schema. Steps are named by the definition's node ids; the run's workflow type
// is DefinitionFlowName.
func DefinitionFlow(opts ...Option) (flow.Definition, error) {
	o := options{maxVisits: DefaultMaxVisits}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.maxVisits < 1 {
		return nil, fmt.Errorf("interp: MaxVisits %d: want at least 1", o.maxVisits)
	}
	fo := append([]flow.Option{
		flow.Description("Runs the declarative definition carried in its input (flowctl start --file)."),
		flow.Category("gateflow"),
		flow.InputSchema(json.RawMessage(`{"type": "object", "required": ["definition"], "properties": {"definition": {"type": "object"}, "hash": {"type": "string"}, "inputs": {"type": "object"}}}`)),
	}, o.flowOpts...)
	f := flow.Define(DefinitionFlowName, func(ctx *flow.Context, in DefinitionInput) (any, error) {
		def, err := in.definition()
		if err != nil {
			return nil, flow.Permanent(err)
		}
		inputs := in.Inputs
		if inputs == nil {
			inputs = map[string]any{}
		}
		if err := checkSchema(def.Inputs, inputs); err != nil {
			return nil, flow.Permanent(fmt.Errorf("%s: input: %w", def.Fields.At("inputs", def.Pos), err))
		}
		return newRunner(ctx, def, inputs, o).run(ctx)
	}, fo...)
	if err := f.Err(); err != nil {
		return nil, fmt.Errorf("interp: %w", err)
	}
	return f, nil
}

// definition parses the carried definition and checks its hash.
func (in DefinitionInput) definition() (*flowdef.Definition, error) {
	if len(in.Definition) == 0 || string(in.Definition) == "null" {
		return nil, errors.New("interp: the input carries no definition")
	}
	def, err := flowdef.Parse("definition.json", in.Definition)
	if err != nil {
		return nil, fmt.Errorf("interp: the input's definition does not parse: %w", err)
	}
	if def.Name == "" || len(def.Steps) == 0 {
		return nil, errors.New("interp: the input's definition has no name or no steps")
	}
	if in.Hash != "" && def.Hash() != in.Hash {
		return nil, fmt.Errorf("interp: the input's definition %s has hash %.12s, not %.12s as its start said", def.Name, def.Hash(), in.Hash)
	}
	return def, nil
}

// StartOptions are the start options that carry def's envelope to a run of
// DefinitionFlow, which has no envelope of its own (`flowctl start --file` uses them):
// the limits as guards that tighten the worker's (a limit written as 0, no limit, keeps
// the worker's), max_cost_usd, budget_policy and budget_pause, priority, labels and
// worker_tags. Schedules, triggers, once and concurrency belong to served definitions
// only: a run started from a file is a one-off. The error names the envelope field that
// cannot be mapped.
func StartOptions(def *flowdef.Definition) (core.StartOptions, error) {
	f, err := Flow(def)
	if err != nil {
		return core.StartOptions{}, err
	}
	i := f.Info()
	so := core.StartOptions{Priority: i.Priority, Labels: i.Labels, WorkerTags: i.WorkerTags,
		BudgetPolicy: i.BudgetPolicy, BudgetPause: i.BudgetPause}
	if i.MaxCostUSD != "" {
		usd, err := budget.ParseUSD(i.MaxCostUSD)
		if err != nil {
			return core.StartOptions{}, fmt.Errorf("%s: limits.max_cost_usd: %w", def.Fields.At("limits", def.Pos), err)
		}
		so.MaxCostUSD = &usd
	}
	pos := func(v int64) int64 { return max(v, 0) } // -1 (no limit) cannot tighten
	g := runs.Guards{MaxChildDepth: int(pos(int64(i.Guards.MaxChildDepth))), MaxFanOut: int(pos(int64(i.Guards.MaxFanOut))),
		MaxTokens: pos(i.Guards.MaxTokens), MaxWallTime: time.Duration(pos(int64(i.Guards.MaxWallTime))), MaxSteps: int(pos(int64(i.Guards.MaxSteps)))}
	if g != (runs.Guards{}) {
		so.Guards = &g
	}
	return so, nil
}

// CheckInputs checks a run's inputs against def's inputs schema, as the run does first
// thing, so a client can refuse a start that would fail at once (nothing starts). The
// error names the inputs field's position and what does not match.
func CheckInputs(def *flowdef.Definition, inputs map[string]any) error {
	if inputs == nil {
		inputs = map[string]any{}
	}
	if err := checkSchema(def.Inputs, inputs); err != nil {
		return fmt.Errorf("%s: input: %w", def.Fields.At("inputs", def.Pos), err)
	}
	return nil
}
