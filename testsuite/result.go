package testsuite

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/approval"
)

// Result is how a run ended: its error, output and final state.
type Result struct {
	env      *Env
	Workflow string
	// Err is the run's error (nil when it completed).
	Err error
	// Output is the handler's output as JSON (completed runs).
	Output json.RawMessage
	// State is the run's final state (the Query gateflow.state).
	State runs.State
}

// Status is the run's final gateflow status.
func (r *Result) Status() runs.Status { return r.State.Status }

// Decode decodes the output into v.
func (r *Result) Decode(v any) error {
	if r.Err != nil {
		return fmt.Errorf("%s failed: %w", r.Workflow, r.Err)
	}
	return json.Unmarshal(r.Output, v)
}

// StepNames lists the steps in the order they started, as "group/name" for parallel
// steps and "name" otherwise.
func (r *Result) StepNames() []string {
	out := make([]string, 0, len(r.State.Steps))
	for _, s := range r.State.Steps {
		name := s.Name
		if s.Group != "" {
			name = s.Group + "/" + name
		}
		out = append(out, name)
	}
	return out
}

// Step returns the last record of the step named name.
func (r *Result) Step(name string) (runs.Step, bool) {
	for i := len(r.State.Steps) - 1; i >= 0; i-- {
		if r.State.Steps[i].Name == name {
			return r.State.Steps[i], true
		}
	}
	return runs.Step{}, false
}

// StepStatuses maps each step (last record) to its status.
func (r *Result) StepStatuses() map[string]runs.StepStatus {
	out := map[string]runs.StepStatus{}
	for _, s := range r.State.Steps {
		out[s.Name] = s.Status
	}
	return out
}

// Cost is what the run spent, exactly.
func (r *Result) Cost() decimal.Decimal { return r.State.CostUSD }

// StepCost is what the step named name cost (all its records).
func (r *Result) StepCost(name string) decimal.Decimal {
	sum := decimal.Zero
	for _, s := range r.State.Steps {
		if s.Name == name {
			sum = sum.Add(s.CostUSD)
		}
	}
	return sum
}

// Votes are the votes counted at the last gate named gate.
func (r *Result) Votes(gate string) []approval.Vote {
	for i := len(r.State.Gates) - 1; i >= 0; i-- {
		if g := r.State.Gates[i]; g.Name == gate {
			return g.Votes
		}
	}
	return nil
}

// Decision is the decision of the last gate named gate, if it closed.
func (r *Result) Decision(gate string) (approval.Decision, bool) {
	for i := len(r.State.Gates) - 1; i >= 0; i-- {
		if g := r.State.Gates[i]; g.Name == gate && g.Decision != nil {
			return *g.Decision, true
		}
	}
	return approval.Decision{}, false
}

func runtimeName(f reflect.Value) string { return runtime.FuncForPC(f.Pointer()).Name() }
