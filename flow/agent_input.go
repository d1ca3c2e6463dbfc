package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/signals"
)

// inputToolParameters is the JSON Schema of an input tool's arguments: the question.
const inputToolParameters = `{"type":"object","properties":{"question":{"type":"string","description":"The question for the person, complete enough to answer without other context."}},"required":["question"],"additionalProperties":false}`

// inputToolDescription is an input tool's description unless ToolDescription sets one.
const inputToolDescription = "Ask a person a question and wait for their answer. Use it when you need a decision, a fact or a permission only a person can give."

// InputTool is a tool through which the model asks people a question: its one
// parameter is the question (a string). A call runs as a human input step (the Input
// machinery: the Update gateflow.input, `flowctl input RUN NAME --data JSON`) named after
// the tool, nested under the agent step ("<tool>#2" while another call of it waits); its
// prompt is req.Prompt, when set, followed by the model's question. req's schema,
// assignees, timeout and size limit apply to the answer. The accepted answer is the
// tool's result: a JSON string as its text, any other JSON value as JSON. An answer that
// does not come in time goes back to the model as a tool error.
func InputTool(name string, req signals.InputRequest, opts ...ToolOption) Tool {
	t := Tool{Name: name, Description: inputToolDescription, Parameters: json.RawMessage(inputToolParameters)}
	for _, o := range opts {
		if o != nil {
			o(&t)
		}
	}
	t.check = func(raw json.RawMessage) error { _, err := inputQuestion(name, raw); return err }
	t.Run = func(ctx *Context, step string, raw json.RawMessage) (string, error) {
		q, err := inputQuestion(name, raw)
		if err != nil {
			return "", err
		}
		r := req
		r.Assignees = append([]string(nil), req.Assignees...)
		r.Prompt = q
		if p := strings.TrimSpace(req.Prompt); p != "" {
			r.Prompt = p + "\n\n" + q
		}
		ans, err := Input[json.RawMessage](ctx, openInputName(ctx, step), r)
		if err != nil {
			return "", err
		}
		return answerText(ans), nil
	}
	return t
}

// inputQuestion is the question in an input tool's arguments.
func inputQuestion(tool string, raw json.RawMessage) (string, error) {
	var args struct {
		Question string `json:"question"`
	}
	dec := json.NewDecoder(bytes.NewReader(orEmptyObject(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return "", &toolArgumentsError{Tool: tool, Err: err}
	}
	if strings.TrimSpace(args.Question) == "" {
		return "", &toolArgumentsError{Tool: tool, Err: errors.New("the question is empty")}
	}
	return strings.TrimSpace(args.Question), nil
}

// openInputName is step, or step#n when an input of that name is open already (two
// calls of one input tool in a turn wait side by side).
func openInputName(ctx *Context, step string) string {
	name := step
	for n := 2; ctx.run.people.inputs[name] != nil; n++ {
		name = fmt.Sprintf("%s#%d", step, n)
	}
	return name
}

// answerText is an answer as the model gets it: a JSON string's text, else the JSON.
func answerText(ans json.RawMessage) string {
	var s string
	if json.Unmarshal(ans, &s) == nil {
		return s
	}
	return string(compactJSON(ans))
}

func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}
