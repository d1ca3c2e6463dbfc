package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/display"
)

// ToolParam is a parameter the model fills in a step template tool (ShellTool, HTTPTool):
// a string, given to a command as the environment variable Name (never spliced into it),
// to a request as a query parameter or a member of its JSON body.
type ToolParam struct {
	// Name is the parameter's name and its environment variable: a letter or '_', then
	// letters, digits and '_'.
	Name string
	// Description tells the model what to put in it.
	Description string
	// Required makes the model give it.
	Required bool
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ShellTool is a tool that runs the shell step template sh as a step: the model fills the
// declared parameters only (strings, each set as an environment variable of the command;
// an undeclared or non-string argument is a *toolArgumentsError), and receives the
// command's standard output. A non-zero exit is a tool failure.
func ShellTool(name string, sh activities.Shell, params []ToolParam, opts ...ToolOption) Tool {
	return templateTool(name, "Runs: "+display.Preview(sh.Command, 200), params, sh.Validate(), opts,
		func(ctx *Context, step string, values map[string]string) (string, error) {
			call := sh
			call.Env = maps.Clone(sh.Env)
			if call.Env == nil {
				call.Env = make(map[string]string, len(values))
			}
			maps.Copy(call.Env, values)
			res, err := ctx.Shell(step, call)
			return res.Stdout, err
		})
}

// HTTPTool is a tool that makes the HTTP step template h as a step: the model fills the
// declared parameters only (strings), sent as the URL's query parameters for GET, HEAD and
// DELETE, else as a JSON object body (the template then has no body of its own); the
// model receives the response body. An unexpected status is a tool failure.
func HTTPTool(name string, h activities.HTTP, params []ToolParam, opts ...ToolOption) Tool {
	u, err := url.Parse(h.URL)
	if err == nil {
		err = h.Validate()
	}
	method := strings.ToUpper(orDefault(h.Method, "GET"))
	inQuery := method == "GET" || method == "HEAD" || method == "DELETE"
	if err == nil && !inQuery && (h.Body != "" || len(h.JSON) > 0) {
		err = errors.New("an HTTP tool that sends its parameters as the body has no body of its own")
	}
	return templateTool(name, "Calls: "+method+" "+h.URL, params, err, opts,
		func(ctx *Context, step string, values map[string]string) (string, error) {
			call := h
			if inQuery {
				q := u.Query()
				for _, k := range slices.Sorted(maps.Keys(values)) {
					q.Set(k, values[k])
				}
				v := *u
				v.RawQuery = q.Encode()
				call.URL = v.String()
			} else {
				body, merr := json.Marshal(values)
				if merr != nil {
					return "", fmt.Errorf("tool %s: %w", name, merr)
				}
				call.JSON = body
			}
			res, err := ctx.HTTP(step, call)
			return res.Body, err
		})
}

// templateTool is a step template tool: its schema from params, run with the model's
// checked values; invalid is what is wrong with the template (the step then fails before
// any turn).
func templateTool(name, description string, params []ToolParam, invalid error, opts []ToolOption,
	run func(ctx *Context, step string, values map[string]string) (string, error)) Tool {
	schema, err := paramsSchema(params)
	if err == nil {
		err = invalid
	}
	t := Tool{Name: name, Description: description, Parameters: schema, err: err}
	for _, o := range opts {
		if o != nil {
			o(&t)
		}
	}
	t.Run = func(ctx *Context, step string, raw json.RawMessage) (string, error) {
		values, err := templateArgs(name, params, raw)
		if err != nil {
			return "", err
		}
		return run(ctx, step, values)
	}
	return t
}

// paramsSchema is the JSON Schema of the declared string parameters.
func paramsSchema(params []ToolParam) (json.RawMessage, error) {
	props := make(map[string]any, len(params))
	required := []string{}
	for _, p := range params {
		if !envName.MatchString(p.Name) {
			return nil, fmt.Errorf("parameter %q: want a letter or '_', then letters, digits and '_'", p.Name)
		}
		if _, dup := props[p.Name]; dup {
			return nil, fmt.Errorf("parameter %q is declared twice", p.Name)
		}
		props[p.Name] = map[string]any{"type": "string", "description": p.Description}
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return json.Marshal(map[string]any{"type": "object", "properties": props, "required": required,
		"additionalProperties": false})
}

// templateArgs are the model's arguments for the declared parameters, checked: an object
// of strings, no undeclared member, every required one given.
func templateArgs(tool string, params []ToolParam, raw json.RawMessage) (map[string]string, error) {
	var args map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, &toolArgumentsError{Tool: tool, Err: err}
		}
	}
	declared := make([]string, len(params))
	for i, p := range params {
		declared[i] = p.Name
	}
	out := make(map[string]string, len(args))
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v, ok := args[k].(string)
		switch {
		case !slices.Contains(declared, k):
			return nil, &toolArgumentsError{Tool: tool, Err: fmt.Errorf("unknown parameter %q", k)}
		case !ok:
			return nil, &toolArgumentsError{Tool: tool, Err: fmt.Errorf("parameter %q is not a string", k)}
		}
		out[k] = v
	}
	for _, p := range params {
		if _, ok := out[p.Name]; p.Required && !ok {
			return nil, &toolArgumentsError{Tool: tool, Err: errors.New("missing parameter " + p.Name)}
		}
	}
	return out, nil
}
