package flow

import (
	"errors"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/gates"
)

// Gate opens the polled gate name and waits until its resolver (the worker's resolver of
// type req.Type) decides it, a person does (req.AllowManual), or its deadline passes.
//
// The gate is one step of kind gate. Each poll is one activity, gateflow.gate.poll, that
// runs the resolver on a worker; between polls the run sleeps on a durable timer of
// req.PollInterval, so a gate that waits for hours holds no worker and survives restarts.
// Meanwhile the run's status is awaiting_gate and it waits for "gate:NAME/TYPE"
// (runs.State.Waiting, the FlowWaiting search attribute).
//
// It returns the gate's Result and, as its error:
//
//   - nil when the gate was approved (by a poll, a person, or the deadline with
//     gates.ApproveOnTimeout), or the deadline passed with gates.ContinueOnTimeout
//     (Result.Outcome is then gates.OutcomeTimedOut);
//   - a *gates.RejectedError (errors.Is gates.ErrRejected) when a poll or a person
//     rejected it, or the deadline did with gates.RejectOnTimeout; returned by the
//     handler, it ends the run as rejected;
//   - a *gates.TimedOutError (errors.Is gates.ErrTimedOut) when the deadline passed with
//     gates.FailOnTimeout, the default (step status timed_out);
//   - a *StepError when the gate could not be polled: a request that does not validate or
//     names a type the worker has no resolver for (ErrorInvalidStep; no activity is
//     scheduled), params the resolver refuses, gates.MaxFailedPolls failed polls in a row,
//     or the run's cancellation.
//
// With req.AllowManual, `flowctl approve RUN NAME` and `flowctl reject RUN NAME --reason
// ...` (flowclient.Client.Vote) decide the gate at once, even in the middle of a sleep or a poll, and
// the Result and the step record who did. Without it such votes are refused and leave no
// trace. Votes sent before the run reached the gate are applied when it opens (or
// recorded as refused in runs.State.Refused).
func (c *Context) Gate(name string, req gates.Request) (gates.Result, error) {
	return c.runGate(name, req)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// UsesGates declares the polled gate types the flow's handler passes to ctx.Gate, so that
// a worker that serves the flow without a resolver for one of them refuses to start
// (Worker.Validate names the flow, the type and the types it has) instead of the gate
// failing when a run reaches it. A blank type is an error of the definition.
func UsesGates(types ...string) Option {
	return func(i *core.WorkflowInfo) error {
		for _, t := range types {
			if strings.TrimSpace(t) == "" {
				return errors.New("uses gates: a gate type is blank")
			}
			if !slices.Contains(i.GateTypes, t) {
				i.GateTypes = append(i.GateTypes, t)
			}
		}
		return nil
	}
}
