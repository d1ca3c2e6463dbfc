package flowdef

import (
	"errors"
	"fmt"
	"github.com/gateflow/gateflow/core"
	"slices"
	"strings"
)

// with returns vis plus ids (a new slice).
func with(vis []string, ids ...string) []string {
	out := append([]string(nil), vis...)
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// intersect keeps the ids present in every list.
func intersect(lists ...[]string) []string {
	if len(lists) == 0 {
		return nil
	}
	var out []string
	for _, id := range lists[0] {
		all := true
		for _, l := range lists[1:] {
			if !slices.Contains(l, id) {
				all = false
				break
			}
		}
		if all {
			out = append(out, id)
		}
	}
	return out
}

// list checks nodes in order and returns the ids visible after them.
func (k *check) list(nodes []*Node, vis []string, c ctx) []string {
	for _, n := range nodes {
		if n == nil {
			continue
		}
		vis = k.node(n, vis, c)
	}
	return vis
}

func label(n *Node) string {
	if n.ID != "" {
		return fmt.Sprintf("%s '%s'", n.Kind, n.ID)
	}
	return string(n.Kind)
}

// node checks one node seen with vis visible and returns what is visible after it.
func (k *check) node(n *Node, vis []string, c ctx) []string {
	f, lb := n.Fields, label(n)
	if n.If != "" && n.Kind != KindIf {
		k.expr(f.At("if", n.Pos), lb+": if", n.If, vis, c)
	}
	if r := n.Retry; r != nil {
		if r.MaxAttempts < 0 || (r.Fields.Has("max_attempts") && r.MaxAttempts == 0) {
			k.add(r.Fields.At("max_attempts", r.Pos), "1 means no retry", "%s: retry.max_attempts must be at least 1", lb)
		}
		k.duration(r.Fields.At("backoff", r.Pos), lb+": retry.backoff", r.Backoff)
		k.duration(r.Fields.At("max_backoff", r.Pos), lb+": retry.max_backoff", r.MaxBackoff)
		if r.Factor != 0 && r.Factor < 1 {
			k.add(r.Fields.At("factor", r.Pos), "use 1 for a constant delay, 2 to double it", "%s: retry.factor must be at least 1", lb)
		}
	}
	k.duration(f.At("timeout", n.Pos), lb+": timeout", n.Timeout)
	k.onError(n.OnError, lb+": on_error")
	k.onError(n.OnTimeout, lb+": on_timeout")
	if n.OnTimeout != nil && n.Timeout == "" && n.Kind != KindGate {
		k.add(n.OnTimeout.Pos, "add timeout: to the node", "%s: on_timeout without timeout", lb)
	}
	k.money(f.At("cost_limit", n.Pos), lb+": cost_limit", n.CostLimit)
	k.checkBounds(n, lb)
	k.schema(n.OutputSchema, lb+": output_schema")

	after := vis
	switch n.Kind {
	case KindStep:
		k.step(n, vis, c)
	case KindSet:
		k.templates(f, n.Pos, lb+": ", "set", mapAny(n.Set), vis, c)
	case KindCheck:
		k.expr(f.At("check", n.Pos), lb+": check", n.Check, vis, c)
		k.template(f.At("message", n.Pos), lb+": message", n.Message, vis, c)
	case KindSwitch:
		k.expr(f.At("switch", n.Pos), lb+": switch", n.Switch, vis, c)
		if len(n.Cases) == 0 {
			k.add(n.Pos, "add cases: with value: and steps:", "%s: no cases", lb)
		}
		var outs [][]string
		for _, cs := range n.Cases {
			if cs == nil {
				continue
			}
			if !cs.Fields.Has("value") {
				k.add(cs.Pos, "add value: (compared with the switch expression)", "%s: case without value", lb)
			}
			outs = append(outs, k.list(cs.Steps, vis, c))
		}
		if n.Fields.Has("default") {
			outs = append(outs, k.list(n.Default, vis, c))
			after = intersect(outs...)
		}
	case KindIf:
		if n.If == "" {
			k.add(n.Pos, "add if: <condition>", "%s: then without if", lb)
		} else {
			k.expr(f.At("if", n.Pos), lb+": if", n.If, vis, c)
		}
		t := k.list(n.Then, vis, c)
		e := k.list(n.Else, vis, c)
		if n.Fields.Has("else") {
			after = intersect(t, e)
		}
	case KindLoop:
		after = k.loop(n, vis, c)
	case KindParallel:
		if len(n.Parallel) == 0 {
			k.add(f.At("parallel", n.Pos), "list the branches, one node each", "%s: no branches", lb)
		}
		var outs [][]string
		for _, b := range n.Parallel {
			if b != nil {
				outs = append(outs, k.node(b, vis, c))
			}
		}
		if n.MinSuccess < 0 || n.MinSuccess > len(n.Parallel) {
			k.add(f.At("min_success", n.Pos), fmt.Sprintf("use 1 to %d", len(n.Parallel)), "%s: min_success %d out of range", lb, n.MinSuccess)
		}
		if n.MinSuccess == 0 || n.MinSuccess == len(n.Parallel) {
			for _, o := range outs {
				after = with(after, o...)
			}
		}
	case KindForeach:
		k.foreach(n, vis, c)
	case KindCall:
		k.templates(f, n.Pos, lb+": ", "with", mapAny(n.With), vis, c)
		k.call(f.At("call", n.Pos), lb, n.Call)
	case KindGate:
		k.gate(n, vis, c)
	case KindSleep:
		k.duration(f.At("sleep", n.Pos), lb+": sleep", n.Sleep)
	case KindSend:
		k.send(n, vis, c)
	case KindFinish:
		if fin := n.Finish; fin != nil {
			k.enum(fin.Fields.At("status", fin.Pos), lb+": status", fin.Status, StatusCompleted, StatusFailed, StatusCancelled)
			k.templates(fin.Fields, fin.Pos, lb+": ", "output", fin.Output, vis, c)
			k.template(fin.Fields.At("message", fin.Pos), lb+": message", fin.Message, vis, c)
		}
	}
	return with(after, n.ID)
}

func mapAny(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func (k *check) onError(o *OnError, field string) {
	if o == nil {
		return
	}
	switch o.Action {
	case "":
		k.add(o.Pos, `write "fail", "continue" or "goto <id>"`, "%s: unknown action '%s'", field, o.Raw)
	case ActionGoto:
		if _, ok := k.ids[o.Target]; !ok {
			k.add(o.Pos, "goto names the id of a node of this flow", "%s: goto target '%s' does not exist", field, o.Target)
		}
	}
}

func (k *check) step(n *Node, vis []string, c ctx) {
	lb, p := label(n), n.Fields.At("uses", n.Pos)
	switch {
	case n.Uses == "" && n.badType["uses"]: // reported by Parse
	case n.Uses == "":
		k.add(p, "name an action: shell, http, agent or a registered one", "%s: empty uses", lb)
	case slices.Contains(core.BuiltinActions, n.Uses), k.v.reg.HasFallbackAction(), k.v.reg.HasAction(n.Uses):
	default:
		k.add(p, fmt.Sprintf("register an action named %s on the worker (flow.Worker.RegisterActivity) or add a fallback action", n.Uses),
			"%s: no registered action '%s'", lb, n.Uses)
	}
	if n.Service != "" && !k.v.reg.HasService(n.Service) {
		k.add(n.Fields.At("service", n.Pos), fmt.Sprintf("declare a service named %s on the workers (flow.WorkerOptions.Services)", n.Service),
			"%s: no declared service '%s'", lb, n.Service)
	}
	if cc := n.Cache; cc != nil {
		k.cache(cc, lb, vis, c)
	}
	k.artifacts(n, lb) // validate_artifacts.go
	k.agentWith(n, lb) // validate_agent.go
	k.templates(n.Fields, n.Pos, lb+": ", "with", mapAny(n.With), vis, c)
}

// cache checks a step's cache: a key (a template) and a positive ttl.
func (k *check) cache(cc *Cache, lb string, vis []string, c ctx) {
	if strings.TrimSpace(cc.Key) == "" {
		k.add(cc.Fields.At("key", cc.Pos), "give the key the result is stored under, e.g. key: \"build-${{ inputs.version }}\"", "%s: cache.key is required", lb)
	} else {
		k.template(cc.Fields.At("key", cc.Pos), lb+": cache.key", cc.Key, vis, c)
	}
	p := cc.Fields.At("ttl", cc.Pos)
	if cc.TTL == "" {
		k.add(p, "give how long a result is reused, e.g. ttl: 10m", "%s: cache.ttl is required", lb)
	} else if d, err := ParseDuration(cc.TTL); err != nil {
		k.add(p, hintDuration, "%s: cache.ttl: %v", lb, err)
	} else if d <= 0 {
		k.add(p, hintDuration, "%s: cache.ttl must be positive", lb)
	}
}

func (k *check) loop(n *Node, vis []string, c ctx) []string {
	lb, l := label(n), n.Loop
	if l == nil {
		k.add(n.Fields.At("loop", n.Pos), "give while, until or over, and steps", "%s: empty loop", lb)
		return vis
	}
	modes := 0
	for _, s := range []string{l.While, l.Until, l.Over} {
		if s != "" {
			modes++
		}
	}
	if modes != 1 {
		k.add(l.Pos, "give exactly one of while (checked before), until (checked after) and over (a list)", "%s: loop needs exactly one of while, until, over", lb)
	}
	if l.MaxIterations < 0 || (l.Over == "" && l.MaxIterations == 0) {
		k.add(l.Fields.At("max_iterations", l.Pos), "bound while and until loops, e.g. max_iterations: 10", "%s: loop needs a positive max_iterations", lb)
	}
	if len(l.Steps) == 0 {
		k.add(l.Pos, "add steps: to the loop", "%s: loop has no steps", lb)
	}
	if l.While != "" {
		k.expr(l.Fields.At("while", l.Pos), lb+": while", l.While, vis, c)
	}
	if l.Over != "" {
		k.expr(l.Fields.At("over", l.Pos), lb+": over", l.Over, vis, c)
	}
	inner := c
	if l.Over != "" {
		inner = c.enter(l.As)
	}
	body := k.list(l.Steps, vis, inner)
	if l.Until != "" {
		k.expr(l.Fields.At("until", l.Pos), lb+": until", l.Until, body, inner)
		return body // a do-while runs its body at least once
	}
	return vis
}

func (k *check) foreach(n *Node, vis []string, c ctx) {
	lb, fe := label(n), n.Foreach
	if fe == nil {
		k.add(n.Fields.At("foreach", n.Pos), "give over or provider, and call or steps", "%s: empty foreach", lb)
		return
	}
	switch {
	case (fe.Over == "") == (fe.Provider == ""):
		k.add(fe.Pos, "give over (a list expression) or provider (a registered item provider)", "%s: foreach needs exactly one of over and provider", lb)
	case fe.Over != "":
		k.expr(fe.Fields.At("over", fe.Pos), lb+": over", fe.Over, vis, c)
	case !k.v.reg.HasItemProvider(fe.Provider):
		k.add(fe.Fields.At("provider", fe.Pos), fmt.Sprintf("register an item provider named %s on the worker", fe.Provider), "%s: no registered item provider '%s'", lb, fe.Provider)
	}
	k.templates(fe.Fields, fe.Pos, lb+": ", "params", mapAny(fe.Params), vis, c)
	if fe.Fields.Has("max_parallel") && fe.MaxParallel < 1 {
		k.add(fe.Fields.At("max_parallel", fe.Pos), "1 runs items one by one", "%s: max_parallel must be at least 1", lb)
	}
	k.enum(fe.Fields.At("on_item_fail", fe.Pos), lb+": on_item_fail", fe.OnItemFail, ItemFailFail, ItemFailContinue, ItemFailSkipDependents)
	inner := c.enter(fe.As)
	if (fe.Call == "") == (len(fe.Steps) == 0) {
		k.add(fe.Pos, "give call (one child run per item) or steps (inline)", "%s: foreach needs exactly one of call and steps", lb)
	}
	if fe.Call != "" {
		k.templates(fe.Fields, fe.Pos, lb+": ", "with", mapAny(fe.With), vis, inner)
		k.call(fe.Fields.At("call", fe.Pos), lb, fe.Call)
	}
	k.list(fe.Steps, vis, inner)
}

func (k *check) send(n *Node, vis []string, c ctx) {
	lb, s := label(n), n.Send
	if s == nil {
		k.add(n.Fields.At("send", n.Pos), "give signal and run or mailbox", "%s: empty send", lb)
		return
	}
	if s.Signal == "" && s.Mailbox == "" {
		k.add(s.Pos, "add signal: <name>", "%s: send needs signal", lb)
	}
	if (s.Run == "") == (s.Mailbox == "") {
		k.add(s.Pos, "give run (a run id) or mailbox (a name)", "%s: send needs exactly one of run and mailbox", lb)
	}
	k.template(s.Fields.At("run", s.Pos), lb+": run", s.Run, vis, c)
	k.template(s.Fields.At("key", s.Pos), lb+": key", s.Key, vis, c)
	k.templates(s.Fields, s.Pos, lb+": ", "payload", s.Payload, vis, c)
}

// call checks a call target: known, not a cycle, not too deep, validated once.
func (k *check) call(p Pos, lb, name string) {
	v := k.v
	if name == "" {
		k.add(p, "name a flow definition or a Go flow", "%s: empty call", lb)
		return
	}
	if i := slices.Index(k.chain, name); i >= 0 {
		k.c.add(p, "break the cycle: a flow may not call itself, directly or not", "%s: circular flow reference: %s", lb, strings.Join(append(slices.Clone(k.chain), name), " -> "))
		return
	}
	if len(k.chain)+1 > v.opts.maxDepth {
		k.c.add(p, "flatten the flows: nesting through call and foreach is bounded", "%s: flow nesting depth exceeds maximum of %d: %s", lb, v.opts.maxDepth, strings.Join(append(slices.Clone(k.chain), name), " -> "))
		return
	}
	if v.reg.HasGoFlow(name) {
		return
	}
	sub, err := v.load(name)
	if err != nil {
		if parse := Errors(err); parse != nil {
			if k.full && !v.validated[name] {
				v.validated[name] = true
				for _, e := range parse {
					e.Message = fmt.Sprintf("in sub-flow '%s': %s", name, e.Message)
					k.c.errs = append(k.c.errs, e)
				}
			}
		} else if errors.Is(err, ErrNotFound) {
			k.add(p, fmt.Sprintf("add a definition named %s (%s.yaml) or register a Go flow named %s on the worker", name, name, name), "%s: no flow named '%s'", lb, name)
		} else {
			k.add(p, "fix the sub-flow's definition", "%s: sub-flow '%s' could not be loaded: %s", lb, name, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return
	}
	full := k.full && !v.validated[name]
	if full {
		v.validated[name] = true
	}
	for _, e := range v.definition(sub, append(slices.Clone(k.chain), name), full) {
		e.Message = fmt.Sprintf("in sub-flow '%s': %s", name, e.Message)
		k.c.errs = append(k.c.errs, e)
	}
}
