package flowdef

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/internal/cronspec"
	"github.com/gateflow/gateflow/signals"
)

// MaxDepth is the default limit on nesting through call and foreach: a chain of
// definitions (the root included) longer than this is an error.
const MaxDepth = 5

// Option changes how Validate works.
type Option func(*options)

type options struct {
	expr     Expressions
	maxDepth int
	guards   WorkerGuards
}

// WithExpressions sets the expression checker (default CEL; the worker passes the
// CEL checker of package flowdef/expr).
func WithExpressions(e Expressions) Option { return func(o *options) { o.expr = e } }

// WithMaxDepth changes the nesting limit through call and foreach (default MaxDepth).
func WithMaxDepth(n int) Option { return func(o *options) { o.maxDepth = n } }

// Hints shared by several rules.
const (
	hintExpr     = "expressions are CEL over inputs, vars, steps.<id>.output (of steps that ran before on every path), item and run"
	hintDuration = `write a Go duration such as "30s", "5m", "2h30m" or "1d"`
	hintMoney    = `write a decimal string in USD such as "2.50"`
)

var (
	nameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	idRe   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

// Validate checks def against the worker's registries and reports every problem at once
// as a *ValidationError (nil when there is none). It checks:
//
//   - the envelope: a name, at least one step, limits, concurrency, schedules, triggers;
//   - node ids: well formed and unique across steps, on_error and always (nested too);
//   - on_error / on_timeout: fail, continue or goto an existing id;
//   - references: steps.X only for an X that ran earlier on every path, vars and inputs
//     declared, item only inside a foreach or loop over a list (through Expressions);
//   - names against reg: step actions (unless a fallback action exists), item providers,
//     poll gate resolver types, called flows (a Go flow or a loadable definition);
//   - JSON Schemas compile (inputs, outputs, output_schema, input gates);
//   - durations and USD amounts parse; enumerations hold known values; numbers are in range;
//   - calls through call and foreach: no cycle, nesting at most MaxDepth; each
//     sub-definition is validated once per call of Validate, its errors prefixed
//     "in sub-flow 'name': ".
//
// Validate is pure: it reads only def and reg (which may load sub-definitions).
func Validate(def *Definition, reg Registry, opts ...Option) error {
	if def == nil {
		return &ValidationError{Errors: []Error{{Message: "no definition", Hint: "parse a file with Parse first"}}}
	}
	o := options{expr: CEL{}, maxDepth: MaxDepth, guards: DefaultWorkerGuards}
	for _, f := range opts {
		f(&o)
	}
	if reg == nil {
		reg = &StaticRegistry{}
	}
	v := &validator{reg: reg, opts: o, validated: map[string]bool{}, loaded: map[string]loadResult{}}
	c := &collector{root: def.Pos.File}
	c.errs = v.definition(def, []string{def.Name}, true)
	return c.result()
}

// Check parses and validates in one pass: the errors of both, together.
func Check(file string, data []byte, reg Registry, opts ...Option) (*Definition, error) {
	def, perr := Parse(file, data)
	if def == nil {
		return nil, perr
	}
	c := &collector{root: file, errs: Errors(perr)}
	if verr := Validate(def, reg, opts...); verr != nil {
		c.errs = append(c.errs, Errors(verr)...)
	}
	return def, c.result()
}

type loadResult struct {
	def *Definition
	err error
}

type validator struct {
	reg       Registry
	opts      options
	validated map[string]bool
	loaded    map[string]loadResult
}

func (v *validator) load(name string) (*Definition, error) {
	if r, ok := v.loaded[name]; ok {
		return r.def, r.err
	}
	d, err := v.reg.LoadDefinition(name)
	if err == nil && d == nil {
		err = fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	v.loaded[name] = loadResult{d, err}
	return d, err
}

// check holds the state of validating one definition.
type check struct {
	v      *validator
	def    *Definition
	c      *collector
	chain  []string
	full   bool
	ids    map[string]Pos
	inputs []string
	vars   []string
	body   []string // every id of the body, visible to on_error and always
	bounds bounds   // the limits its runs have (validate_bounds.go)
}

// ctx is what a node list sees.
type ctx struct {
	item     bool
	itemName string
	// outer are the names of the items of enclosing foreach nodes and loops over a list
	// that the current item does not hide (a different `as`).
	outer []string
}

// enter is c inside a foreach or loop over a list whose item is named as ("" is item):
// the enclosing items stay visible under their names unless as hides one.
func (c ctx) enter(as string) ctx {
	if as == "" {
		as = "item"
	}
	in := ctx{item: true, itemName: as}
	names := append([]string(nil), c.outer...)
	if c.item {
		cur := c.itemName
		if cur == "" {
			cur = "item"
		}
		names = append(names, cur)
	}
	for _, n := range names {
		if n != as && !slices.Contains(in.outer, n) {
			in.outer = append(in.outer, n)
		}
	}
	sort.Strings(in.outer)
	return in
}

// definition validates def (full) or only follows its calls for cycles and depth.
func (v *validator) definition(def *Definition, chain []string, full bool) []Error {
	k := &check{v: v, def: def, c: &collector{root: def.Pos.File}, chain: chain, full: full, ids: map[string]Pos{},
		bounds: boundsOf(def, v.opts.guards)}
	if full {
		k.envelope()
	}
	k.collectIDs(def.Steps)
	k.collectIDs(def.OnError)
	k.collectIDs(def.Always)
	for _, n := range allNodes(def.Steps) {
		if n.ID != "" {
			k.body = append(k.body, n.ID)
		}
	}
	k.vars = k.varNames()
	vis := k.list(def.Steps, nil, ctx{})
	_ = vis
	k.list(def.OnError, k.body, ctx{})
	k.list(def.Always, k.body, ctx{})
	return k.c.errs
}

func (k *check) add(p Pos, hint, format string, args ...any) {
	if !k.full {
		return
	}
	k.c.add(p, hint, format, args...)
}

// allNodes lists nodes depth first, children included.
func allNodes(list []*Node) []*Node {
	var out []*Node
	for _, n := range list {
		if n == nil {
			continue
		}
		out = append(out, n)
		for _, sub := range children(n) {
			out = append(out, allNodes(sub)...)
		}
	}
	return out
}

// children are the node lists inside n.
func children(n *Node) [][]*Node {
	var out [][]*Node
	for _, c := range n.Cases {
		if c != nil {
			out = append(out, c.Steps)
		}
	}
	out = append(out, n.Default, n.Then, n.Else, n.Parallel)
	if n.Loop != nil {
		out = append(out, n.Loop.Steps)
	}
	if n.Foreach != nil {
		out = append(out, n.Foreach.Steps)
	}
	return out
}

func (k *check) collectIDs(list []*Node) {
	for _, n := range allNodes(list) {
		if n.ID == "" {
			continue
		}
		p := n.Fields.At("id", n.Pos)
		if !idRe.MatchString(n.ID) {
			k.add(p, "start with a letter or '_', then letters, digits, '_' or '-'", "invalid node id '%s'", n.ID)
		}
		if first, dup := k.ids[n.ID]; dup {
			k.add(p, "ids name outputs and goto targets: make them unique", "duplicate node id '%s' (first at %d:%d)", n.ID, first.Line, first.Col)
			continue
		}
		k.ids[n.ID] = p
	}
}

// varNames are the declared vars and every name a set node assigns.
func (k *check) varNames() []string {
	var out []string
	for name := range k.def.Vars {
		out = append(out, name)
	}
	for _, list := range [][]*Node{k.def.Steps, k.def.OnError, k.def.Always} {
		for _, n := range allNodes(list) {
			for name := range n.Set {
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func (k *check) scope(vis []string, c ctx) Scope {
	s := Scope{Inputs: k.inputs, Vars: k.vars, Steps: vis, Item: c.item, ItemName: c.itemName, Extra: c.outer}
	if !k.def.Inputs.IsZero() {
		s.InputSchema = k.def.Inputs.JSON
	}
	return s
}

func (k *check) expr(p Pos, field, e string, vis []string, c ctx) {
	if !k.full {
		return
	}
	if err := k.v.opts.expr.CheckExpr(e, k.scope(vis, c)); err != nil {
		k.add(p, hintExpr, "%s: %v", field, err)
	}
}

func (k *check) template(p Pos, field, s string, vis []string, c ctx) {
	if !k.full || s == "" {
		return
	}
	if err := k.v.opts.expr.CheckTemplate(s, k.scope(vis, c)); err != nil {
		k.add(p, hintExpr, "%s: %v", field, err)
	}
}

// templates checks every string inside a generic value written at path of a mapping
// whose Fields are f (nested positions are recorded by path at parse time); lb labels the
// node in messages.
func (k *check) templates(f Fields, def Pos, lb, path string, val any, vis []string, c ctx) {
	switch t := val.(type) {
	case string:
		k.template(f.At(path, def), lb+path, t, vis, c)
	case map[string]any:
		keys := make([]string, 0, len(t))
		for key := range t {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			k.templates(f, def, lb, path+"."+key, t[key], vis, c)
		}
	case []any:
		for i, e := range t {
			k.templates(f, def, lb, path+"["+strconv.Itoa(i)+"]", e, vis, c)
		}
	}
}

func (k *check) duration(p Pos, field, s string) {
	if s == "" {
		return
	}
	if _, err := ParseDuration(s); err != nil {
		k.add(p, hintDuration, "%s: %v", field, err)
	}
}

func (k *check) money(p Pos, field, s string) {
	if s == "" {
		return
	}
	if _, err := budget.ParseUSD(s); err != nil {
		var ae *budget.AmountError
		if errors.As(err, &ae) {
			k.add(p, hintMoney, "%s: USD amount %q %s", field, ae.Value, ae.Reason)
			return
		}
		k.add(p, hintMoney, "%s: %v", field, err)
	}
}

func (k *check) schema(s Schema, field string) {
	if s.IsZero() || !k.full {
		return
	}
	if _, err := signals.CompileSchema(s.JSON); err != nil {
		msg := err.Error()
		var ce *signals.CompileError
		if errors.As(err, &ce) && len(ce.Errors) > 0 {
			msg = strings.Join(ce.Errors, "; ")
		}
		k.add(s.Pos, "see https://json-schema.org (draft 2020-12; only local $ref)", "%s: invalid JSON Schema: %s", field, msg)
	}
}

func (k *check) enum(p Pos, field, val string, allowed ...string) {
	if val == "" {
		return
	}
	for _, a := range allowed {
		if val == a {
			return
		}
	}
	k.add(p, "one of: "+strings.Join(allowed, ", "), "%s: unknown value '%s'", field, val)
}

func (k *check) nonNegative(f Fields, def Pos, field string, n int) {
	if n < 0 {
		k.add(f.At(field, def), "use a positive number (0 means no limit)", "%s: must not be negative (got %d)", field, n)
	}
}

// maxDays is the most days a time.Duration holds (about 292 years).
const maxDays = int(math.MaxInt64 / int64(24*time.Hour))

// ParseDuration reads a Go duration with an extra day unit ("1d", "1d12h"); it refuses
// zero and negative durations, and durations too long for a time.Duration.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	var days time.Duration
	if i := strings.Index(t, "d"); i > 0 {
		n, err := strconv.Atoi(t[:i])
		if err != nil {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		if n > maxDays || n < -maxDays {
			return 0, fmt.Errorf("duration %q is too long (at most %dd)", s, maxDays)
		}
		days, t = time.Duration(n)*24*time.Hour, t[i+1:]
	}
	var rest time.Duration
	if t != "" {
		var err error
		if rest, err = time.ParseDuration(t); err != nil {
			return 0, fmt.Errorf("bad duration %q", s)
		}
	}
	d := days + rest
	if (rest > 0 && d < days) || (rest < 0 && d > days) {
		return 0, fmt.Errorf("duration %q is too long (at most %dd)", s, maxDays)
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", s)
	}
	return d, nil
}

func (k *check) envelope() {
	d := k.def
	if d.Name == "" {
		k.add(d.Pos, "add `name: my-flow`", "missing name")
	} else if !nameRe.MatchString(d.Name) {
		k.add(d.Fields.At("name", d.Pos), "use lower case letters, digits, '.', '_' and '-'", "invalid flow name '%s'", d.Name)
	}
	if len(d.Steps) == 0 {
		k.add(d.Fields.At("steps", d.Pos), "add at least one node under steps:", "no steps")
	}
	k.schema(d.Inputs, "inputs")
	k.schema(d.Outputs, "outputs")
	k.inputs = schemaProperties(d.Inputs)
	for name := range d.Vars {
		if !idRe.MatchString(name) {
			k.add(d.Fields.At("vars", d.Pos), "start with a letter or '_', then letters, digits, '_' or '-'", "invalid variable name '%s'", name)
		}
	}
	if l := d.Limits; l != nil {
		k.duration(l.Fields.At("wall_time", l.Pos), "limits.wall_time", l.WallTime)
		k.money(l.Fields.At("max_cost_usd", l.Pos), "limits.max_cost_usd", l.MaxCostUSD)
		policy, err := budget.ParsePolicy(l.BudgetPolicy)
		if err != nil {
			k.add(l.Fields.At("budget_policy", l.Pos), "one of: stop, pause", "limits.budget_policy: unknown value '%s'", l.BudgetPolicy)
		}
		k.duration(l.Fields.At("budget_pause", l.Pos), "limits.budget_pause", l.BudgetPause)
		if l.BudgetPause != "" && err == nil && policy != budget.Pause {
			k.add(l.Fields.At("budget_pause", l.Pos), "set budget_policy: pause, or remove budget_pause", "limits.budget_pause: only a run with budget_policy pause waits")
		}
		k.nonNegative(l.Fields, l.Pos, "steps", l.Steps)
		k.nonNegative(l.Fields, l.Pos, "tokens", l.Tokens)
		k.nonNegative(l.Fields, l.Pos, "depth", l.Depth)
		k.nonNegative(l.Fields, l.Pos, "fan_out", l.FanOut)
	}
	k.startDefaults()
	if c := d.Concurrency; c != nil {
		if c.Fields.Has("key") {
			if _, err := c.KeyTemplate(); err != nil {
				k.add(c.Fields.At("key", c.Pos), `write literal text and ${{ inputs.<field> }} references, e.g. "review-${{ inputs.repo }}"`, "concurrency.key: %v", err)
			} else {
				k.keyInputs(c)
			}
		}
		k.nonNegative(c.Fields, c.Pos, "max_runs", c.MaxRuns)
		k.enum(c.Fields.At("on_overflow", c.Pos), "concurrency.on_overflow", c.OnOverflow, "queue", "refuse", "replace")
	}
	scheduleIDs := map[string]bool{}
	for _, s := range d.Schedules {
		if s == nil {
			continue
		}
		switch {
		case (s.Cron == "") == (s.Every == ""):
			k.add(s.Pos, "give exactly one of cron and every", "schedule needs cron or every")
		case s.Cron != "":
			if _, err := cronspec.Parse(s.Cron); err != nil {
				k.add(s.Fields.At("cron", s.Pos), `write 5 fields such as "0 3 * * *" or @daily`, "schedule cron: %v", err)
			}
		default:
			k.duration(s.Fields.At("every", s.Pos), "schedule every", s.Every)
		}
		if s.Fields.Has("id") {
			switch {
			case !scheduleIDRe.MatchString(s.ID):
				k.add(s.Fields.At("id", s.Pos), "use 1-63 lower-case letters, digits, '_', '.' and '-', starting with a letter", "invalid schedule id '%s'", s.ID)
			case scheduleIDs[s.ID]:
				k.add(s.Fields.At("id", s.Pos), "give each schedule its own id", "duplicate schedule id '%s'", s.ID)
			}
			scheduleIDs[s.ID] = true
		}
		if s.Timezone != "" && s.Cron == "" && s.Every != "" {
			k.add(s.Fields.At("timezone", s.Pos), "remove timezone, or use cron", "schedule timezone applies to cron only, not to every")
		} else if s.Timezone != "" {
			if _, err := time.LoadLocation(s.Timezone); err != nil {
				k.add(s.Fields.At("timezone", s.Pos), `use an IANA zone such as "Europe/Paris"`, "schedule timezone: unknown zone '%s'", s.Timezone)
			}
		}
	}
	for _, t := range d.Triggers {
		if t == nil {
			continue
		}
		switch t.On {
		case "completed", "failed", "finished":
			if t.Flow == "" {
				k.add(t.Pos, "name the flow whose runs start this one", "trigger on %s needs flow", t.On)
			}
		case "signal":
			if t.Signal == "" {
				k.add(t.Pos, "name the signal", "trigger on signal needs signal")
			}
		default:
			k.add(t.Fields.At("on", t.Pos), "one of: completed, failed, finished, signal", "trigger: unknown on '%s'", t.On)
		}
		k.triggerExprs(t)
	}
}

var (
	// scheduleIDRe is schedule.ID's pattern: a letter first, so an id never looks like
	// the position that names a schedule without one.
	scheduleIDRe = regexp.MustCompile(`^[a-z][a-z0-9_.\-]{0,62}$`)
	labelKeyRe   = regexp.MustCompile(`^[a-z0-9]([a-z0-9_.\-]{0,61}[a-z0-9])?$`)
	tagRe        = regexp.MustCompile(`^[a-z0-9][a-z0-9_.\-]{0,62}$`)
)

// Bounds of the start defaults, as package flow checks them.
const (
	maxPriority   = 5
	maxLabels     = 20
	maxWorkerTags = 4
)

// startDefaults checks priority, labels and worker_tags as flow.StartDefaults does.
func (k *check) startDefaults() {
	d := k.def
	if d.Priority < 0 || d.Priority > maxPriority {
		k.add(d.Fields.At("priority", d.Pos), "use 1 (highest) to 5 (lowest); 0 or none means 3", "priority %d is out of range", d.Priority)
	}
	lp := d.Fields.At("labels", d.Pos)
	if len(d.Labels) > maxLabels {
		k.add(lp, "keep at most 20 labels", "%d labels: at most %d", len(d.Labels), maxLabels)
	}
	for _, key := range sortedKeys(d.Labels) {
		if !labelKeyRe.MatchString(key) {
			k.add(lp, "use 1-63 lower-case letters, digits and _.- (starting and ending with a letter or digit)", "invalid label key '%s'", key)
		} else if v := d.Labels[key]; len(v) > 200 || strings.ContainsAny(v, "\n\r\x00") {
			k.add(lp, "keep label values to one line of at most 200 characters", "label %s: value too long or multi-line", key)
		}
	}
	tp := d.Fields.At("worker_tags", d.Pos)
	if len(d.WorkerTags) > maxWorkerTags {
		k.add(tp, "a worker has at most 4 tags", "%d worker tags: at most %d", len(d.WorkerTags), maxWorkerTags)
	}
	seen := map[string]bool{}
	for _, t := range d.WorkerTags {
		switch {
		case !tagRe.MatchString(t):
			k.add(tp, "use 1-63 lower-case letters, digits and _.- starting with a letter or digit", "invalid worker tag '%s'", t)
		case seen[t]:
			k.add(tp, "give each tag once", "worker tag %s given twice", t)
		}
		seen[t] = true
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for key := range m {
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

// schemaProperties are the top-level property names of an object schema, or nil.
func schemaProperties(s Schema) []string {
	if s.IsZero() {
		return nil
	}
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(s.JSON, &doc) != nil || doc.Properties == nil {
		return nil
	}
	out := make([]string, 0, len(doc.Properties))
	for name := range doc.Properties {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
