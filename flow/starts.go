package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/gateflow/gateflow/runs"
)

// runEndOf is the core.RunEnd of a run that ended with status, if triggers see it.
func runEndOf(s runs.Status) (core.RunEnd, bool) {
	switch s {
	case runs.StatusCompleted, runs.StatusWarning:
		return core.WhenCompleted, true
	case runs.StatusFailed, runs.StatusBudgetExceeded, runs.StatusRejected:
		return core.WhenFailed, true
	}
	return "", false
}

// Once starts the flow once, with input (encoded as JSON): every worker that serves the
// flow ensures, when it starts, that a run with the workflow ID "once:<flow>@<queue>"
// exists, and starts it if not. The ID is deterministic and the start refuses a duplicate
// (Temporal's REJECT_DUPLICATE reuse and USE_EXISTING conflict policies), so several
// workers starting together, or a worker restarted, start it once; a run with that ID
// that already ended, however it ended, is not started again (until the server's
// retention drops it). flowclient.Client.RestartOnce starts it again when asked. Like scheduled
// runs, a once run is not reserved against the monthly quotas by a client: it checks
// them itself before any step. An input the flow's input type does not accept, or Once
// given twice, is an error of Define.
func Once(input any) Option {
	return func(i *core.WorkflowInfo) error {
		if i.Once != nil {
			return errors.New("once: given twice")
		}
		b, err := json.Marshal(input)
		if err != nil {
			return fmt.Errorf("once input: %w", err)
		}
		if err := startplan.CheckInput(i.InputSchema, b); err != nil {
			return fmt.Errorf("once input: %w", err)
		}
		i.Once = &core.OnceInfo{Input: b}
		return nil
	}
}

// OnRunOf starts the flow when a run of the flow other ends one of the when ways
// (core.WhenCompleted, core.WhenFailed), with that run's output (its JSON; for a failed run, what
// the handler returned with its error) as input. The ended run's wrapper starts it, as
// the last thing it does, through an activity, with the workflow ID
// "<flow>/triggered-by/<run's workflow ID>/<run ID>": a retried activity or a replayed run
// finds the run it started rather than starting another, so each ended run starts the
// flow exactly once. An output the flow's input type does not accept fails that start
// (the ended run's history shows the activity's error and its log a warning); the ended
// run keeps its outcome. The triggered run has the flow's start defaults and checks the
// monthly quotas itself. Runs of plans trigger nothing.
//
// Both flows must be served by the same worker: a worker serving a flow triggered by one
// it does not serve refuses to start. A flow cannot trigger itself, and other must be a
// flow name.
func OnRunOf(other string, when ...core.RunEnd) Option {
	return func(i *core.WorkflowInfo) error {
		if err := startplan.ValidateName(other); err != nil {
			return fmt.Errorf("on run of: %w", err)
		}
		if other == i.Name {
			return fmt.Errorf("on run of %s: a flow cannot trigger itself", other)
		}
		if len(when) == 0 {
			return fmt.Errorf("on run of %s: give core.WhenCompleted, core.WhenFailed or both", other)
		}
		t := core.TriggerInfo{Flow: other}
		for _, w := range when {
			if w != core.WhenCompleted && w != core.WhenFailed {
				return fmt.Errorf("on run of %s: outcome %q: want %q or %q", other, w, core.WhenCompleted, core.WhenFailed)
			}
			if !slices.Contains(t.When, w) {
				t.When = append(t.When, w)
			}
		}
		slices.Sort(t.When)
		if slices.ContainsFunc(i.Triggers, func(x core.TriggerInfo) bool { return x.Flow == other }) {
			return fmt.Errorf("on run of %s: given twice", other)
		}
		i.Triggers = append(i.Triggers, t)
		return nil
	}
}

// TriggerInput gives the flow's trigger on the flow other (OnRunOf, given before) a
// condition and an input: when a run of other ends one of the trigger's ways, fn gets how
// it ended and its output (JSON, "null" without one) and says whether to start the flow
// (start false: nothing starts) and with which input (encoded as JSON, checked against
// the flow's input type as any start's; json.RawMessage passes through). Without
// TriggerInput the flow starts with the output as its input.
//
// Where it runs: fn is the triggered flow's code, but the ended run's wrapper calls it, in
// workflow code at the end of that run, and records its answer (a SideEffect) before it
// starts anything; the answer, not fn, is what a replay of the ended run uses, so editing
// fn (or a definition's if and input) changes only runs that end afterwards. fn must be a
// pure function of its arguments (no clock, I/O or randomness), like any workflow code.
// The worker running the ended run must serve the flow, as for any trigger (see OnRunOf):
// a worker serving both computes it with its own version of fn. An error of fn starts
// nothing; the ended run logs it and keeps its outcome.
func TriggerInput(other string, fn func(end core.RunEnd, output json.RawMessage) (input any, start bool, err error)) Option {
	return func(i *core.WorkflowInfo) error {
		if fn == nil {
			return fmt.Errorf("trigger input for %s: the function is nil", other)
		}
		k := slices.IndexFunc(i.Triggers, func(x core.TriggerInfo) bool { return x.Flow == other })
		if k < 0 {
			return fmt.Errorf("trigger input for %s: give OnRunOf(%q, ...) before it", other, other)
		}
		if i.Triggers[k].Map != nil {
			return fmt.Errorf("trigger input for %s: given twice", other)
		}
		i.Triggers[k].Mapped, i.Triggers[k].Map = true, fn
		return nil
	}
}

// OnSignal lets the signal name start the flow: flowclient.Client.SignalStart(ctx, flow, e) with
// e.Name name starts a run whose input is the signal's payload, with the workflow ID
// "<flow>/on-signal/<name>/<key>" (Temporal's SignalWithStartWorkflow), and delivers the
// signal to it (the handler can also receive it, and later ones, with WaitSignal on
// (name, key)). Signals with the same key reach the same run while it runs; a key starts
// one run: once that run ended, a signal start with its key is refused with a
// *RunExistsError. The run has the flow's start defaults and checks the monthly quotas
// itself.
func OnSignal(name string) Option {
	return func(i *core.WorkflowInfo) error {
		if err := startplan.ValidateName(name); err != nil {
			return fmt.Errorf("on signal: signal name %q: want 1-200 letters, digits or _.-/ starting with a letter or digit", name)
		}
		if slices.Contains(i.SignalStarts, name) {
			return fmt.Errorf("on signal %s: given twice", name)
		}
		i.SignalStarts = append(i.SignalStarts, name)
		return nil
	}
}

// trigger is one flow a worker starts when a run of another flow ends.
type trigger struct {
	flow string
	when []core.RunEnd
	// mapInput is the flow's TriggerInput for this trigger, if any.
	mapInput core.TriggerMap
}

// triggersOf maps each flow name to the flows of flows it triggers (OnRunOf), in flows'
// order.
func triggersOf(flows []Definition) map[string][]trigger {
	out := map[string][]trigger{}
	for _, f := range flows {
		if f == nil {
			continue
		}
		for _, t := range f.Info().Triggers {
			out[t.Flow] = append(out[t.Flow], trigger{flow: f.Name(), when: t.When, mapInput: t.Map})
		}
	}
	return out
}

// checkTriggers reports the flows triggered by a flow the worker does not serve: that
// trigger would never fire.
func checkTriggers(flows []Definition) []error {
	served := map[string]bool{}
	for _, f := range flows {
		if f != nil {
			served[f.Name()] = true
		}
	}
	var errs []error
	for _, f := range flows {
		if f == nil {
			continue
		}
		for _, t := range f.Info().Triggers {
			if !served[t.Flow] {
				errs = append(errs, fmt.Errorf("flow %s is started by runs of %s, which this worker does not serve", f.Name(), t.Flow))
			}
		}
	}
	return errs
}
