package interp

import (
	"time"

	"github.com/gateflow/gateflow/schedule"

	"errors"
	"fmt"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
)

// envelopeOption is one flow option a definition's envelope implies, with where the
// field it comes from was written.
type envelopeOption struct {
	pos   flowdef.Pos
	field string
	opt   flow.Option
}

// envelopeOptions maps the envelope of def (limits, concurrency, priority, labels,
// worker_tags, schedules, triggers, once) onto the flow options a Go flow would use, in
// that order. Each option is tried on a scratch WorkflowInfo, so a value the runtime
// refuses is an error at the field's position; a field the runtime cannot honour is
// refused rather than dropped (see the package documentation).
func envelopeOptions(def *flowdef.Definition) ([]flow.Option, error) {
	var eo []envelopeOption
	var errs []error
	add := func(p flowdef.Pos, field string, opt flow.Option) {
		eo = append(eo, envelopeOption{pos: p, field: field, opt: opt})
	}
	fail := func(p flowdef.Pos, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", p, fmt.Sprintf(format, args...)))
	}

	if l := def.Limits; l != nil {
		limitOptions(l, add, fail)
	}
	if c := def.Concurrency; c != nil {
		p := def.Fields.At("concurrency", def.Pos)
		n := c.MaxRuns
		if !c.Fields.Has("max_runs") {
			n = 1
		}
		if c.Fields.Has("key") {
			key, err := c.KeyTemplate()
			if err != nil {
				fail(c.Fields.At("key", c.Pos), "concurrency.key: %v", err)
			} else {
				add(c.Fields.At("key", c.Pos), "concurrency", flow.MaxRunsPerKey(key, n, core.Overflow(c.OnOverflow)))
			}
		} else {
			add(p, "concurrency", flow.MaxRuns(n, core.Overflow(c.OnOverflow)))
		}
	}
	if def.Priority != 0 || len(def.Labels) > 0 || len(def.WorkerTags) > 0 {
		p := def.Pos
		for _, k := range []string{"priority", "labels", "worker_tags"} {
			if def.Fields.Has(k) {
				p = def.Fields.At(k, def.Pos)
				break
			}
		}
		add(p, "priority, labels and worker_tags", flow.StartDefaults(core.StartOptions{
			Priority: def.Priority, Labels: def.Labels, WorkerTags: def.WorkerTags,
		}))
	}
	for i, s := range def.Schedules {
		if s == nil {
			continue
		}
		if opt, ok := scheduleOption(s, i, fail); ok {
			add(s.Pos, fmt.Sprintf("schedules[%d]", i), opt)
		}
	}
	for _, o := range triggerOptions(def.Triggers, fail) {
		add(o.pos, o.field, o.opt)
	}
	if def.Once {
		add(def.Fields.At("once", def.Pos), "once", flow.Once(map[string]any{}))
	}

	// Try each option alone, as Define will apply them, to report its error where the
	// field was written.
	probe := core.WorkflowInfo{Name: def.Name}
	if !def.Inputs.IsZero() {
		if err := flow.InputSchema(def.Inputs.JSON)(&probe); err != nil {
			fail(def.Fields.At("inputs", def.Pos), "inputs: %v", err)
		}
	}
	out := make([]flow.Option, 0, len(eo))
	for _, o := range eo {
		if err := o.opt(&probe); err != nil {
			fail(o.pos, "%s: %v", o.field, err)
			continue
		}
		out = append(out, o.opt)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// limitOptions maps limits onto WithGuards, MaxCostUSD and OnBudgetExceeded. A guard not
// written keeps the worker's default; one written as 0 means no limit (-1 in Guards).
func limitOptions(l *flowdef.Limits, add func(flowdef.Pos, string, flow.Option), fail func(flowdef.Pos, string, ...any)) {
	var g flow.Guards
	guard := func(key string, v int) int64 {
		switch {
		case !l.Fields.Has(key):
			return 0
		case v == 0:
			return -1
		case v < 0:
			fail(l.Fields.At(key, l.Pos), "limits.%s: must not be negative (got %d)", key, v)
			return 0
		}
		return int64(v)
	}
	g.MaxSteps = int(guard("steps", l.Steps))
	g.MaxTokens = guard("tokens", l.Tokens)
	g.MaxChildDepth = int(guard("depth", l.Depth))
	g.MaxFanOut = int(guard("fan_out", l.FanOut))
	if l.WallTime != "" {
		d, err := flowdef.ParseDuration(l.WallTime)
		if err != nil {
			fail(l.Fields.At("wall_time", l.Pos), "limits.wall_time: %v", err)
		}
		g.MaxWallTime = d
	}
	if g != (flow.Guards{}) {
		add(l.Pos, "limits", flow.WithGuards(g))
	}
	if l.MaxCostUSD != "" {
		p := l.Fields.At("max_cost_usd", l.Pos)
		usd, err := budget.ParseUSD(l.MaxCostUSD)
		if err != nil {
			fail(p, "limits.max_cost_usd: %v", err)
		} else {
			add(p, "limits.max_cost_usd", flow.MaxCostUSD(usd))
		}
	}
	if l.Fields.Has("budget_policy") {
		var pause time.Duration
		if l.BudgetPause != "" {
			d, err := flowdef.ParseDuration(l.BudgetPause)
			if err != nil {
				fail(l.Fields.At("budget_pause", l.Pos), "limits.budget_pause: %v", err)
			}
			pause = d
		}
		add(l.Fields.At("budget_policy", l.Pos), "limits.budget_policy", flow.OnBudgetExceeded(budget.Policy(l.BudgetPolicy), pause))
	}
}

// scheduleOption maps one schedule onto flow.Schedule: cron (prefixed CRON_TZ=zone with
// a timezone) or "@every <every>", the id as schedule.ID, the input as schedule.Input. The schedule overlap is
// the Go default (skip).
func scheduleOption(s *flowdef.Schedule, i int, fail func(flowdef.Pos, string, ...any)) (flow.Option, bool) {
	var spec string
	switch {
	case s.Cron != "" && s.Every != "", s.Cron == "" && s.Every == "":
		fail(s.Pos, "schedules[%d]: give exactly one of cron and every", i)
		return nil, false
	case s.Cron != "":
		spec = s.Cron
		if s.Timezone != "" {
			spec = "CRON_TZ=" + s.Timezone + " " + s.Cron
		}
	default:
		if s.Timezone != "" {
			fail(s.Fields.At("timezone", s.Pos), "schedules[%d].timezone applies to cron only, not to every", i)
			return nil, false
		}
		d, err := flowdef.ParseDuration(s.Every)
		if err != nil {
			fail(s.Fields.At("every", s.Pos), "schedules[%d].every: %v", i, err)
			return nil, false
		}
		spec = "@every " + d.String()
	}
	var opts []schedule.Option
	if s.Fields.Has("id") {
		opts = append(opts, schedule.ID(s.ID))
	}
	if s.Fields.Has("input") {
		opts = append(opts, schedule.Input(s.Input))
	}
	return flow.Schedule(spec, opts...), true
}
