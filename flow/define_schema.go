package flow

import (
	"encoding/json"
	"errors"
	"github.com/gateflow/gateflow/core"
)

// InputSchema replaces the JSON Schema of the flow's input, which Define derives from the
// input type, with schema: clients check a start's input against it before anything
// starts (core.WorkflowInfo.InputSchema). Flows whose input type is loose (map[string]any, as
// declarative flows of package flowdef/interp have) use it to publish the schema their
// definition declares. The handler should still validate what it receives. An empty
// schema keeps the derived one; a schema that is not JSON is an error of Define.
func InputSchema(schema json.RawMessage) Option {
	return func(i *core.WorkflowInfo) error {
		if len(schema) == 0 {
			return nil
		}
		if !json.Valid(schema) {
			return errors.New("input schema is not valid JSON")
		}
		i.InputSchema = append(json.RawMessage(nil), schema...)
		return nil
	}
}
