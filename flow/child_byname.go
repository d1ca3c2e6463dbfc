package flow

import (
	"encoding/json"
	"errors"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/startplan"
)

// ChildByName runs the flow registered as workflowName as a child run for the step name,
// exactly as Child does (guards, budget, cancellation, ChildTags, Detached), for callers
// that know the child only by name: the declarative flows of package flowdef/interp,
// whose `call:` names another definition or a Go flow. The input is sent as it is (it
// must encode to what the child's input type decodes) and the output is returned as raw
// JSON (nil for a Detached child, which is not waited for). A name no worker of the
// child's queue serves fails the step at once, as with Child.
func (c *Context) ChildByName(name, workflowName string, in any, opts ...StepOption) (json.RawMessage, error) {
	f := &Flow[any, json.RawMessage]{info: core.WorkflowInfo{Name: workflowName}}
	if err := startplan.ValidateName(workflowName); err != nil {
		f.err = err
	} else if workflowName == "" {
		f.err = errors.New("child flow name is empty")
	}
	return Child(c, name, f, in, opts...)
}
