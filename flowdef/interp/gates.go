package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/quality"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/signals"
)

// gate runs a gate node: approval (ctx.Approval), input (flow.Input), signal
// (flow.WaitSignal), poll (ctx.Gate) or quality (ctx.QualityGate). Its output is the
// decision, the answer, the signal's payload, the poll's result or the quality record.
func (r *runner) gate(ctx *flow.Context, f *frame, n *flowdef.Node) (any, error) {
	g := n.Gate
	if g == nil {
		return nil, errors.New("gate is empty")
	}
	d, err := timeout(n)
	if err != nil {
		return nil, err
	}
	prompt := ""
	if g.Prompt != "" {
		if prompt, err = r.ev.render(f, g.Prompt); err != nil {
			return nil, fmt.Errorf("%s: prompt: %w", g.Fields.At("prompt", g.Pos), err)
		}
	}
	switch g.Type {
	case flowdef.GateApproval:
		if prompt == "" {
			prompt = "Approve " + name(n) + "?"
		}
		who, err := r.approvers(f, g)
		if err != nil {
			return nil, err
		}
		// The deadline's default (reject) returns a *approval.TimedOutError the node's
		// on_timeout may route; gate on_timeout fail fails the run whatever the node says
		// (validation refuses a node on_timeout with it), approve closes the gate approved.
		req := approval.Request{Message: prompt, Approvers: who, Required: g.Required, Timeout: d,
			OnTimeout: approval.OnTimeout(g.OnTimeout)}
		dec, err := ctx.Approval(name(n), req)
		if err != nil {
			return nil, err
		}
		return plain(dec)
	case flowdef.GateInput:
		if prompt == "" {
			prompt = "Answer " + name(n)
		}
		who, err := r.approvers(f, g)
		if err != nil {
			return nil, err
		}
		start := ctx.Now()
		raw, err := flow.Input[json.RawMessage](ctx, name(n), signals.InputRequest{Prompt: prompt, Schema: g.Schema.JSON, Assignees: who, Timeout: d})
		if err != nil {
			return nil, waitErr(ctx, start, d, err)
		}
		return jsonValue(raw), nil
	case flowdef.GateSignal:
		key := ""
		if g.Key != "" {
			if key, err = r.ev.render(f, g.Key); err != nil {
				return nil, fmt.Errorf("%s: key: %w", g.Fields.At("key", g.Pos), err)
			}
		}
		start := ctx.Now()
		raw, err := flow.WaitSignal[json.RawMessage](ctx, g.Signal, key, d)
		if err != nil {
			return nil, waitErr(ctx, start, d, err)
		}
		return jsonValue(raw), nil
	case flowdef.GatePoll:
		params, err := r.ev.valueMap(f, g.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: params: %w", g.Fields.At("params", g.Pos), err)
		}
		req := gates.Request{Type: g.Resolver, Params: params, Timeout: d, AllowManual: g.AllowManual}
		if g.PollInterval != "" {
			if req.PollInterval, err = flowdef.ParseDuration(g.PollInterval); err != nil {
				return nil, fmt.Errorf("%s: poll_interval: %w", g.Fields.At("poll_interval", g.Pos), err)
			}
		}
		res, err := ctx.Gate(name(n), req)
		if err != nil {
			return nil, err
		}
		return plain(res)
	case flowdef.GateQuality:
		src, ok := f.steps[g.Source]
		if !ok {
			return nil, fmt.Errorf("%s: source: step %s has not run", g.Fields.At("source", g.Pos), g.Source)
		}
		q := quality.Gate{Threshold: g.Threshold}
		if g.OnFail == flowdef.ActionContinue {
			q.OnFail = quality.Continue
		}
		rec, err := ctx.QualityGate(name(n), src.Output, q)
		var af *flow.AllowedFailure
		if err != nil && !(q.OnFail == quality.Continue && errors.As(err, &af)) {
			return nil, err
		}
		return plain(rec)
	}
	return nil, fmt.Errorf("%s: gate type %q is not supported", g.Fields.At("type", g.Pos), g.Type)
}

// approvers renders a gate's approvers: each entry is a template; one that is exactly
// one ${{ expr }} giving a list adds each element. The names are checked when the gate
// opens (approval.Request.Validate, signals.InputRequest), as a Go flow's are.
func (r *runner) approvers(f *frame, g *flowdef.Gate) ([]string, error) {
	if len(g.Approvers) == 0 {
		return nil, nil
	}
	p := g.Fields.At("approvers", g.Pos)
	out := make([]string, 0, len(g.Approvers))
	for i, a := range g.Approvers {
		v, err := r.ev.value(f, a)
		if err != nil {
			return nil, fmt.Errorf("%s: approvers[%d]: %w", p, i, err)
		}
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for j, el := range x {
				s, ok := el.(string)
				if !ok {
					return nil, fmt.Errorf("%s: approvers[%d][%d]: want a user or group name, got %s", p, i, j, describe(el))
				}
				out = append(out, s)
			}
		default:
			return nil, fmt.Errorf("%s: approvers[%d]: want a user or group name or a list of them, got %s", p, i, describe(v))
		}
	}
	return out, nil
}

// describe names a value's JSON type in messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	}
	return "a number"
}

// waitErr marks the failure of a wait that reached its timeout (by the run's clock) as a
// timeout, so on_timeout applies.
func waitErr(ctx *flow.Context, start time.Time, d time.Duration, err error) error {
	if d > 0 && !isCancelled(err) && ctx.Workflow().Err() == nil && !ctx.Now().Before(start.Add(d)) {
		return fmt.Errorf("%w: %w", errWaitTimedOut, err)
	}
	return err
}

// plain turns a Go value into the JSON-like value expressions read.
func plain(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonValue(b), nil
}

// send signals a run (send.run) or posts to a mailbox: flow.Context.Send with the signal name,
// the rendered key (a mailbox's key is its name when no key is given) and payload.
func (r *runner) send(ctx *flow.Context, f *frame, n *flowdef.Node) error {
	s := n.Send
	if s == nil {
		return errors.New("send is empty")
	}
	run, key := "", ""
	var err error
	if s.Run != "" {
		if run, err = r.ev.render(f, s.Run); err != nil {
			return fmt.Errorf("%s: run: %w", s.Fields.At("run", s.Pos), err)
		}
	}
	if s.Key != "" {
		if key, err = r.ev.render(f, s.Key); err != nil {
			return fmt.Errorf("%s: key: %w", s.Fields.At("key", s.Pos), err)
		}
	} else if run == "" {
		key = s.Mailbox
	}
	payload, err := r.ev.value(f, s.Payload)
	if err != nil {
		return fmt.Errorf("%s: payload: %w", s.Fields.At("payload", s.Pos), err)
	}
	opts, err := r.stepOptions(n)
	if err != nil {
		return err
	}
	return ctx.With(opts...).Send(s.Signal, run, key, payload)
}
