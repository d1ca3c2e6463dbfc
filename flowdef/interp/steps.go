package interp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/expr"
	"github.com/gateflow/gateflow/internal/protocol"
)

// The built-in actions of `uses:`.
const (
	usesShell = "shell"
	usesHTTP  = "http"
	usesAgent = "agent"
)

// exec runs n by kind and returns what it recorded (Status is set by the caller).
func (r *runner) exec(ctx *flow.Context, f *frame, n *flowdef.Node) (expr.StepResult, error) {
	var out any
	var err error
	switch n.Kind {
	case flowdef.KindStep:
		return r.step(ctx, f, n)
	case flowdef.KindSet:
		err = r.set(f, n)
	case flowdef.KindCheck:
		err = r.check(f, n)
	case flowdef.KindIf:
		err = r.ifNode(ctx, f, n)
	case flowdef.KindSwitch:
		err = r.switchNode(ctx, f, n)
	case flowdef.KindLoop:
		err = r.loop(ctx, f, n)
	case flowdef.KindParallel:
		out, err = r.parallel(ctx, f, n)
	case flowdef.KindForeach:
		out, err = r.foreach(ctx, f, n)
	case flowdef.KindCall:
		out, err = r.call(ctx, f, n)
	case flowdef.KindGate:
		out, err = r.gate(ctx, f, n)
	case flowdef.KindSleep:
		err = r.sleep(ctx, n)
	case flowdef.KindSend:
		err = r.send(ctx, f, n)
	case flowdef.KindFinish:
		err = r.finishNode(f, n)
	default:
		err = fmt.Errorf("node kind %q is not supported by the interpreter", n.Kind)
	}
	return expr.StepResult{Output: out}, err
}

// name is the step name a node's primitive is recorded under: its id.
func name(n *flowdef.Node) string {
	if n.ID != "" {
		return n.ID
	}
	return fmt.Sprintf("%s-%d-%d", n.Kind, n.Pos.Line, n.Pos.Col)
}

// stepOptions maps a node's timeout, retry, cost_limit, on_error and on_timeout onto
// step options. A failure routed to continue or goto is an allowed failure for the flow
// runtime (recorded failed and allowed); the interpreter then goes on or jumps.
func (r *runner) stepOptions(n *flowdef.Node) ([]flow.StepOption, error) {
	var opts []flow.StepOption
	d, err := timeout(n)
	if err != nil {
		return nil, err
	}
	if d > 0 {
		opts = append(opts, flow.StepTimeout(d))
	}
	p, err := retryPolicy(n.Retry)
	if err != nil {
		return nil, err
	}
	if p != nil {
		opts = append(opts, flow.Retry(*p))
	}
	if n.Service != "" {
		opts = append(opts, flow.UseService(n.Service))
	}
	if n.CostLimit != "" {
		d, err := decimal.NewFromString(n.CostLimit)
		if err != nil {
			return nil, fmt.Errorf("%s: cost_limit: %w", n.Fields.At("cost_limit", n.Pos), err)
		}
		opts = append(opts, flow.CostLimit(d))
	}
	routed := func(o *flowdef.OnError) bool {
		return o != nil && (o.Action == flowdef.ActionContinue || o.Action == flowdef.ActionGoto)
	}
	if routed(n.OnError) {
		opts = append(opts, flow.OnFailure(flow.Continue))
	}
	switch {
	case routed(n.OnTimeout):
		opts = append(opts, flow.OnTimeout(flow.Continue))
	case n.OnTimeout != nil && n.OnTimeout.Action == flowdef.ActionFail:
		opts = append(opts, flow.OnTimeout(flow.Halt))
	}
	return opts, nil
}

// cacheOption maps cache: onto flow.Cache (flow.SharedCache when shared), with the key
// rendered. A key that is not shared is prefixed with the definition's name: runs of
// DefinitionFlow (one workflow type for every definition) keep their entries apart too.
func (r *runner) cacheOption(f *frame, cc *flowdef.Cache) (flow.StepOption, error) {
	key, err := r.ev.render(f, cc.Key)
	if err != nil {
		return nil, fmt.Errorf("%s: cache.key: %w", cc.Fields.At("key", cc.Pos), err)
	}
	if strings.TrimSpace(key) == "" {
		return nil, fmt.Errorf("%s: cache.key %q rendered empty", cc.Fields.At("key", cc.Pos), cc.Key)
	}
	ttl, err := optDuration(cc.TTL)
	if err != nil {
		return nil, fmt.Errorf("%s: cache.ttl: %w", cc.Fields.At("ttl", cc.Pos), err)
	}
	if cc.Shared {
		return flow.SharedCache(key, ttl), nil
	}
	return flow.Cache(r.def.Name+": "+key, ttl), nil
}

// allStepOptions are a step node's options (stepOptions) and its cache.
func (r *runner) allStepOptions(f *frame, n *flowdef.Node) ([]flow.StepOption, error) {
	opts, err := r.stepOptions(n)
	if err != nil || n.Cache == nil {
		return opts, err
	}
	o, err := r.cacheOption(f, n.Cache)
	if err != nil {
		return nil, err
	}
	return append(opts, o), nil
}

// retryPolicy maps retry: onto Temporal's policy (nil without one).
func retryPolicy(rt *flowdef.Retry) (*temporal.RetryPolicy, error) {
	if rt == nil {
		return nil, nil
	}
	p := &temporal.RetryPolicy{MaximumAttempts: int32(rt.MaxAttempts), BackoffCoefficient: rt.Factor}
	var err error
	if p.InitialInterval, err = optDuration(rt.Backoff); err != nil {
		return nil, fmt.Errorf("%s: retry.backoff: %w", rt.Fields.At("backoff", rt.Pos), err)
	}
	if p.MaximumInterval, err = optDuration(rt.MaxBackoff); err != nil {
		return nil, fmt.Errorf("%s: retry.max_backoff: %w", rt.Fields.At("max_backoff", rt.Pos), err)
	}
	return p, nil
}

// timeout is the node's timeout (0 without one).
func timeout(n *flowdef.Node) (time.Duration, error) {
	if n.Timeout == "" {
		return 0, nil
	}
	d, err := flowdef.ParseDuration(n.Timeout)
	if err != nil {
		return 0, fmt.Errorf("%s: timeout: %w", n.Fields.At("timeout", n.Pos), err)
	}
	return d, nil
}

// specTimeout is a shell or http step's with.timeout, else its node's timeout: those
// steps enforce their timeout themselves (flow.StepTimeout only bounds their attempt with
// a slack over it), so without it a node's timeout would not stop them.
func specTimeout(n *flowdef.Node, with string) (time.Duration, error) {
	d, err := optDuration(with)
	if err != nil {
		return 0, fmt.Errorf("with.timeout: %w", err)
	}
	if d == 0 {
		return timeout(n)
	}
	return d, nil
}

// decodeWith decodes a rendered `with:` into the params struct v, refusing unknown
// fields so a typo is an error naming the field.
func decodeWith(n *flowdef.Node, with map[string]any, v any) error {
	raw, err := json.Marshal(with)
	if err != nil {
		return fmt.Errorf("with: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: with: %w", n.Fields.At("with", n.Pos), err)
	}
	return nil
}

// shellCommandWith is a shell command's `with:` (a shell step's, a shell tool's).
type shellCommandWith struct {
	Command string            `json:"command"`
	Dir     string            `json:"dir"`
	Env     map[string]string `json:"env"`
	Timeout string            `json:"timeout"`
}

type shellWith struct {
	shellCommandWith
	// Outputs and Inputs are the step's artifacts (activities.Shell).
	Outputs []string                   `json:"outputs"`
	Inputs  []activities.ArtifactInput `json:"inputs"`
}

type httpWith struct {
	Method       string            `json:"method"`
	URL          string            `json:"url"`
	Headers      map[string]string `json:"headers"`
	Body         string            `json:"body"`
	JSON         any               `json:"json"`
	Timeout      string            `json:"timeout"`
	ExpectStatus []int             `json:"expect_status"`
	// IdempotencyHeader renames the Idempotency-Key header ("-" sends none).
	IdempotencyHeader string `json:"idempotency_header"`
}

func optDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return flowdef.ParseDuration(s)
}

// builtinSpec renders a shell, http or agent step's `with:` into its activities spec
// (nil for a registered action); an agent loop is an error (ctx.Always runs one activity).
func (r *runner) builtinSpec(f *frame, n *flowdef.Node) (activities.Spec, error) {
	if n.Uses != usesShell && n.Uses != usesHTTP && n.Uses != usesAgent {
		return nil, nil
	}
	with, err := r.ev.valueMap(f, n.With)
	if err != nil {
		return nil, fmt.Errorf("%s: with: %w", n.Fields.At("with", n.Pos), err)
	}
	switch n.Uses {
	case usesShell:
		var w shellWith
		if err := decodeWith(n, with, &w); err != nil {
			return nil, err
		}
		d, err := specTimeout(n, w.Timeout)
		if err != nil {
			return nil, err
		}
		for _, in := range w.Inputs {
			if in.Key != "" {
				return nil, fmt.Errorf("%s: with.inputs: key is set by the run, not the definition", n.Fields.At("with", n.Pos))
			}
		}
		return activities.Shell{Command: w.Command, Dir: w.Dir, Env: w.Env, Timeout: d, Outputs: w.Outputs, Inputs: w.Inputs}, nil
	case usesHTTP:
		var w httpWith
		if err := decodeWith(n, with, &w); err != nil {
			return nil, err
		}
		d, err := specTimeout(n, w.Timeout)
		if err != nil {
			return nil, err
		}
		h := activities.HTTP{Method: w.Method, URL: w.URL, Headers: w.Headers, Body: w.Body, Timeout: d, ExpectStatus: w.ExpectStatus,
			IdempotencyHeader: w.IdempotencyHeader}
		if h.Method == "" {
			h.Method = "GET"
		}
		if w.JSON != nil {
			if h.JSON, err = json.Marshal(w.JSON); err != nil {
				return nil, fmt.Errorf("with.json: %w", err)
			}
		}
		return h, nil
	default:
		a, loop, err := r.agentSpec(n, with)
		if err == nil && loop != nil {
			err = fmt.Errorf("%s: an agent loop does not run after the run is cancelled", n.Fields.At("with", n.Pos))
		}
		return a, err
	}
}

// step runs a `uses:` node: shell, http and agent through their flow primitives, any
// other name as the activity registered under it, with the rendered `with:` as its one
// argument.
func (r *runner) step(ctx *flow.Context, f *frame, n *flowdef.Node) (expr.StepResult, error) {
	if n.Uses == usesAgent {
		return r.agentStep(ctx, f, n) // agent.go
	}
	spec, err := r.builtinSpec(f, n)
	if err != nil {
		return expr.StepResult{}, err
	}
	opts, err := r.allStepOptions(f, n)
	if err != nil {
		return expr.StepResult{}, err
	}
	switch s := spec.(type) {
	case activities.Shell:
		res, err := ctx.Shell(name(n), s, opts...)
		if err != nil {
			return expr.StepResult{}, err
		}
		return expr.StepResult{Output: shellOutput(res)}, nil
	case activities.HTTP:
		res, err := ctx.HTTP(name(n), s, opts...)
		if err != nil {
			return expr.StepResult{}, err
		}
		if len(res.JSON) > 0 {
			return expr.StepResult{Output: jsonValue(res.JSON)}, nil
		}
		return expr.StepResult{Output: res.Body}, nil
	}
	with, err := r.ev.valueMap(f, n.With)
	if err != nil {
		return expr.StepResult{}, fmt.Errorf("%s: with: %w", n.Fields.At("with", n.Pos), err)
	}
	if n.Uses == "" {
		return expr.StepResult{}, errors.New("uses is empty")
	}
	var raw json.RawMessage
	if reg := r.opts.registry; reg != nil && !reg.HasAction(n.Uses) && reg.HasFallbackAction() {
		// No activity of that name on the worker: its fallback action takes the call.
		raw, err = flow.Step[json.RawMessage](ctx.With(opts...), name(n), protocol.FallbackActionActivity,
			activities.ActionCall{Name: n.Uses, With: with})
	} else {
		raw, err = flow.Step[json.RawMessage](ctx.With(opts...), name(n), n.Uses, with)
	}
	if err != nil {
		return expr.StepResult{}, err
	}
	return expr.StepResult{Output: jsonValue(raw)}, nil
}

// shellOutput is a shell step's output: its stdout without the final line breaks, parsed
// when it is JSON (textOutput). A stdout longer than the result keeps
// (activities.MaxOutputBytes) is its head, never parsed: the head of a JSON document is
// not the document.
func shellOutput(res activities.ShellResult) any {
	out := strings.TrimRight(res.Stdout, "\n")
	if res.StdoutCut() {
		return out
	}
	return textOutput(out)
}

// textOutput is a step's text as its output: the decoded value when the text is a JSON
// object or array, the text itself otherwise.
func textOutput(s string) any {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		var v any
		if json.Unmarshal([]byte(t), &v) == nil {
			return v
		}
	}
	return s
}

// set assigns variables, in key order (each sees the ones assigned before it).
func (r *runner) set(f *frame, n *flowdef.Node) error {
	for _, k := range sortedKeys(n.Set) {
		v, err := r.ev.value(f, n.Set[k])
		if err != nil {
			return fmt.Errorf("%s: set %s: %w", n.Fields.At("set", n.Pos), k, err)
		}
		f.vars[k] = v
	}
	return nil
}

// check fails the node with its message when the condition is false.
func (r *runner) check(f *frame, n *flowdef.Node) error {
	ok, err := r.ev.evalBool(f, n.Check)
	if err != nil {
		return fmt.Errorf("%s: check: %w", n.Fields.At("check", n.Pos), err)
	}
	if ok {
		return nil
	}
	msg := "check " + n.Check + " is false"
	if n.Message != "" {
		m, err := r.ev.render(f, n.Message)
		if err != nil {
			return fmt.Errorf("%s: message: %w", n.Fields.At("message", n.Pos), err)
		}
		msg = m
	}
	return errors.New(msg)
}

// finishNode ends the run (a finishSignal goes up to the run).
func (r *runner) finishNode(f *frame, n *flowdef.Node) error {
	fin := n.Finish
	if fin == nil {
		return errors.New("finish is empty")
	}
	s := &finishSignal{node: n, status: fin.Status}
	if s.status == "" {
		s.status = flowdef.StatusCompleted
	}
	out, err := r.ev.value(f, fin.Output)
	if err != nil {
		return fmt.Errorf("%s: output: %w", fin.Fields.At("output", fin.Pos), err)
	}
	s.output = out
	if fin.Message != "" {
		if s.message, err = r.ev.render(f, fin.Message); err != nil {
			return fmt.Errorf("%s: message: %w", fin.Fields.At("message", fin.Pos), err)
		}
	}
	return s
}

// sleep waits the node's duration on a durable timer.
func (r *runner) sleep(ctx *flow.Context, n *flowdef.Node) error {
	d, err := flowdef.ParseDuration(n.Sleep)
	if err != nil {
		return fmt.Errorf("%s: sleep: %w", n.Fields.At("sleep", n.Pos), err)
	}
	return ctx.Sleep(name(n), d)
}
