package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/events"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/typeschema"
	"github.com/gateflow/gateflow/signals"
)

// Input asks people for an answer of type T as the step name and waits for it: the Update
// gateflow.input carries the answer, and its Validator refuses answers that do not fit
// req.Schema or T, or come from people not among req.Assignees. It returns an
// *signals.TimedOutError-like error when req.Timeout passes first.
func Input[T any](ctx *Context, name string, req signals.InputRequest) (T, error) {
	v, _, err := askInput[T](ctx, name, runs.KindInput, req, nil)
	return v, err
}

// askInput is Input recording a step of kind (Decide asks people through it); begun, when
// set, gets the step once it is recorded. It returns the accepted answer
// too (nil when there is none).
func askInput[T any](ctx *Context, name string, kind runs.StepKind, req signals.InputRequest, begun func(*step)) (T, *signals.InputAnswer, error) {
	var zero T
	rt := ctx.run
	s := ctx.begin(name, kind)
	now := s.began
	if begun != nil {
		begun(s)
	}
	fail := func(status runs.StepStatus, err error) (T, *signals.InputAnswer, error) {
		return zero, nil, s.fail(s.now(), status, err)
	}
	in, err := signals.NewInput(name, req, now)
	if err != nil {
		return fail(runs.StepFailed, fmt.Errorf("input %s: %w", name, err))
	}
	if err := ctx.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return fail(runs.StepFailed, err)
	}
	if s.planned(string(kind) + ": " + display.Preview(oneLine(req.Prompt), 100)) {
		return zero, nil, nil
	}
	members, err := ctx.snapshotGroups("input "+name, req.Assignees)
	if err != nil {
		return fail(runs.StepFailed, err)
	}
	schema, err := typeschema.Compile(reflect.TypeOf(&zero).Elem())
	if err != nil {
		return fail(runs.StepFailed, fmt.Errorf("input %s: the schema of %T: %w", name, zero, err))
	}
	w := &inputWait{input: in, members: members, decode: func(raw json.RawMessage) error {
		if err := schema.Validate(orNull(raw)); err != nil {
			return err
		}
		var v T
		return json.Unmarshal(orNull(raw), &v)
	}}
	defer rt.people.openInput(w)()

	rt.emit(ctx.wctx, events.InputRequested, name, "", req.Prompt, map[string]any{
		"assignees": req.Assignees, "schema": req.Schema,
		"command": runs.Wait{Kind: runs.ForInput, Name: name}.Command(ctx.RunID())})
	wait := runs.Wait{Kind: runs.ForInput, Name: name}
	ctx.wait(wait)
	ok, werr := ctx.await(req.Timeout, "input "+name, func() bool { return in.Answer != nil })
	ctx.unwait(wait)
	if werr != nil {
		return fail(runs.StepCancelled, werr)
	}
	if !ok {
		return fail(runs.StepFailed, fmt.Errorf("input %s: nobody answered within %s", name, req.Timeout))
	}
	var v T
	if err := json.Unmarshal(orNull(in.Answer.Payload), &v); err != nil {
		return fail(runs.StepFailed, fmt.Errorf("input %s: decode the answer: %w", name, err))
	}
	rt.emit(ctx.wctx, events.InputReceived, name, "", "", map[string]any{"by": in.Answer.By})
	s.end(s.now(), runs.StepCompleted, "", "answered by "+in.Answer.By+": "+display.Preview(string(in.Answer.Payload), 150))
	return v, in.Answer, nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
