package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
)

// DefaultMaxVisits is how many times a goto may re-enter the same node in one run when
// MaxVisits does not say otherwise (the first, ordinary visit does not count).
const DefaultMaxVisits = 10

// Option adjusts how definitions are interpreted (Flow, Live.Flow).
type Option func(*options)

type options struct {
	model     string
	maxVisits int
	flowOpts  []flow.Option
	registry  flowdef.Registry
}

// Registry is what the worker serving the flow registered (flow.Worker.Registry): a step
// whose `uses:` names no registered action runs the worker's fallback action
// (the activity "gateflow.action", with a activities.ActionCall) when it has one. Without it every
// action name is dispatched as an activity of that name.
func Registry(r flowdef.Registry) Option { return func(o *options) { o.registry = r } }

// DefaultModel is the model of agent steps whose `with:` names none (activities.Agent's
// Model is required). Without it such a step fails with "agent: model is empty".
func DefaultModel(model string) Option { return func(o *options) { o.model = model } }

// MaxVisits bounds how many times a goto may jump to the same node in one run (default
// DefaultMaxVisits). Past it the run fails with an error naming the node and the bound,
// so a goto loop between two failing nodes ends.
func MaxVisits(n int) Option { return func(o *options) { o.maxVisits = n } }

// FlowOptions adds options to the flow.Define call that builds the flow (a worker's
// guards, MaxAttempts, schedules...), after those the definition implies (description,
// category, version, input schema and the envelope: see the package documentation), so
// an option given here that sets the same thing wins.
func FlowOptions(opts ...flow.Option) Option {
	return func(o *options) { o.flowOpts = append(o.flowOpts, opts...) }
}

// Live holds the current definition of one declarative flow, which Set replaces (a
// worker reloading an edited file). New runs use the definition current when they start;
// a run already going on keeps the exact definition it started with, recorded in its
// history (see Flow). A Live is safe for concurrent use.
type Live struct {
	mu    sync.RWMutex
	name  string
	cur   *flowdef.Definition
	known map[string]*flowdef.Definition // by Hash: every definition Set so far
}

// NewLive returns a Live whose current definition is def.
func NewLive(def *flowdef.Definition) (*Live, error) {
	if def == nil {
		return nil, errors.New("interp: definition is nil")
	}
	l := &Live{name: def.Name, known: map[string]*flowdef.Definition{}}
	if err := l.Set(def); err != nil {
		return nil, err
	}
	return l, nil
}

// Set makes def the definition new runs use. Its name must be the Live's (a flow's name
// is its Temporal workflow type and cannot change under a registered worker).
func (l *Live) Set(def *flowdef.Definition) error {
	if def == nil {
		return errors.New("interp: definition is nil")
	}
	if def.Name != l.name {
		return fmt.Errorf("interp: definition %q cannot replace %q: the name of a flow cannot change", def.Name, l.name)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur = def
	l.known[def.Hash()] = def
	return nil
}

// Current is the definition new runs use.
func (l *Live) Current() *flowdef.Definition {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cur
}

// byHash is a definition Set earlier with that hash, or nil.
func (l *Live) byHash(h string) *flowdef.Definition {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.known[h]
}

// Flow is Live.Flow over a Live holding def alone.
func Flow(def *flowdef.Definition, opts ...Option) (flow.Definition, error) {
	l, err := NewLive(def)
	if err != nil {
		return nil, err
	}
	return l.Flow(opts...)
}

// Flow builds the regular gateflow flow that runs the Live's definitions: flow.Define
// with the definition's name, a map[string]any input checked against its `inputs`
// schema, and a handler that walks its nodes calling the flow primitives (see the package
// documentation). The description, category, version, input schema and envelope (limits,
// concurrency, start defaults, schedules, triggers, once) are those of the definition
// current now; an envelope field the runtime refuses or cannot honour is an error naming
// its position.
//
// Pinning: the handler's first action records the definition it runs with (name, hash
// and canonical JSON) as a workflow SideEffect, so every replay of the run, on this
// worker or another, after a Set or a restart, runs the recorded definition: from the
// Live's memory when it was Set here, else parsed again from the recorded JSON. Only new
// runs see what Set installs.
func (l *Live) Flow(opts ...Option) (flow.Definition, error) {
	o := options{maxVisits: DefaultMaxVisits}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.maxVisits < 1 {
		return nil, fmt.Errorf("interp: MaxVisits %d: want at least 1", o.maxVisits)
	}
	def := l.Current()
	var fo []flow.Option
	if def.Description != "" {
		fo = append(fo, flow.Description(def.Description))
	}
	if def.Category != "" {
		fo = append(fo, flow.Category(def.Category))
	}
	if def.Version != "" {
		fo = append(fo, flow.Version(def.Version))
	}
	if !def.Inputs.IsZero() {
		fo = append(fo, flow.InputSchema(def.Inputs.JSON))
	}
	env, err := envelopeOptions(def)
	if err != nil {
		return nil, fmt.Errorf("interp: %s: %w", def.Name, err)
	}
	fo = append(fo, env...)
	fo = append(fo, o.flowOpts...)
	f := flow.Define(def.Name, l.handler(o), fo...)
	if err := f.Err(); err != nil {
		return nil, fmt.Errorf("interp: %s: %w", def.Pos, err)
	}
	return f, nil
}

// pinned is what a run records of its definition.
type pinned struct {
	Name      string          `json:"name"`
	Hash      string          `json:"hash"`
	Canonical json.RawMessage `json:"canonical"`
}

// pin records (first execution) or reads back (replay) the run's definition.
func (l *Live) pin(ctx *flow.Context) (*flowdef.Definition, error) {
	enc := workflow.SideEffect(ctx.Workflow(), func(workflow.Context) any {
		d := l.Current()
		return pinned{Name: d.Name, Hash: d.Hash(), Canonical: d.Canonical()}
	})
	var p pinned
	if err := enc.Get(&p); err != nil {
		return nil, fmt.Errorf("interp: reading the run's pinned definition: %w", err)
	}
	return l.resolve(p)
}

// resolve is the definition a run recorded: the one Set with its hash, or the recorded
// canonical JSON parsed again (after a restart, or on another worker).
func (l *Live) resolve(p pinned) (*flowdef.Definition, error) {
	if d := l.byHash(p.Hash); d != nil {
		return d, nil
	}
	d, err := flowdef.Parse(fmt.Sprintf("%s@%.12s", p.Name, p.Hash), p.Canonical)
	if err != nil {
		return nil, fmt.Errorf("interp: the run's pinned definition %s (%.12s) no longer parses: %w", p.Name, p.Hash, err)
	}
	return d, nil
}

func (l *Live) handler(o options) func(*flow.Context, map[string]any) (any, error) {
	return func(ctx *flow.Context, in map[string]any) (any, error) {
		def, err := l.pin(ctx)
		if err != nil {
			return nil, flow.Permanent(err)
		}
		if in == nil {
			in = map[string]any{}
		}
		if err := checkSchema(def.Inputs, in); err != nil {
			return nil, flow.Permanent(fmt.Errorf("%s: input: %w", def.Fields.At("inputs", def.Pos), err))
		}
		return newRunner(ctx, def, in, o).run(ctx)
	}
}

// checkSchema validates v against s (nothing to check without a schema).
func checkSchema(s flowdef.Schema, v any) error {
	if s.IsZero() {
		return nil
	}
	sc, err := compileSchema(s.JSON)
	if err != nil {
		return fmt.Errorf("schema does not compile: %w", err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return sc.Validate(raw)
}
