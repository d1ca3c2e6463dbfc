package flowdef

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/gateflow/gateflow/internal/artifactname"
)

// Artifacts of shell steps: with.outputs lists the files the step leaves for later steps
// (paths or globs under its work directory), with.inputs the artifacts of earlier shell
// steps it needs, each {step, name, path}.

const (
	outputsHint = "list paths or globs under the step's work directory, e.g. outputs: [dist/app.tar.gz, reports/*.xml]"
	inputsHint  = "list the artifacts of earlier shell steps, e.g. inputs: [{step: build, name: dist/app.tar.gz}]"
)

// artifacts checks a shell step's with.outputs and with.inputs.
func (k *check) artifacts(n *Node, lb string) {
	if n.Uses != "shell" || n.With == nil {
		return
	}
	p := n.Fields.At("with", n.Pos)
	if raw, ok := n.With["outputs"]; ok {
		list, ok := raw.([]any)
		if !ok {
			k.add(p, outputsHint, "%s: with.outputs must be a list of strings, got %s", lb, yamlKind(raw))
		}
		for i, o := range list {
			s, ok := o.(string)
			switch {
			case !ok:
				k.add(p, outputsHint, "%s: with.outputs[%d] must be a string, got %s", lb, i, yamlKind(o))
			case strings.Contains(s, "${{"): // a template: checked when it is rendered
			default:
				if err := artifactname.Check(s); err != nil {
					k.add(p, outputsHint, "%s: with.outputs[%d] %q %v", lb, i, s, err)
				} else if _, err := path.Match(s, ""); err != nil {
					k.add(p, outputsHint, "%s: with.outputs[%d] %q is not a valid glob: %v", lb, i, s, err)
				}
			}
		}
	}
	raw, ok := n.With["inputs"]
	if !ok {
		return
	}
	list, ok := raw.([]any)
	if !ok {
		k.add(p, inputsHint, "%s: with.inputs must be a list of {step, name, path}, got %s", lb, yamlKind(raw))
		return
	}
	for i, in := range list {
		m, ok := in.(map[string]any)
		if !ok {
			k.add(p, inputsHint, "%s: with.inputs[%d] must be a mapping {step, name, path}, got %s", lb, i, yamlKind(in))
			continue
		}
		k.artifactInput(p, fmt.Sprintf("%s: with.inputs[%d]", lb, i), m)
	}
}

// artifactInput checks one {step, name, path}: step is a shell node of the flow that
// declares outputs; name and path are artifact names.
func (k *check) artifactInput(p Pos, at string, m map[string]any) {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if key != "step" && key != "name" && key != "path" {
			k.add(p, inputsHint, "%s: unknown field '%s' (want step, name, path)", at, key)
		}
	}
	step, _ := m["step"].(string)
	switch producer := k.nodeByID(step); {
	case step == "":
		k.add(p, inputsHint, "%s: step is required: the id of the shell step that produced the artifact", at)
	case strings.Contains(step, "${{"):
	case producer == nil:
		k.add(p, inputsHint, "%s: step '%s' does not exist", at, step)
	case producer.Uses != "shell":
		k.add(p, "artifacts come from shell steps' with.outputs", "%s: step '%s' is not a shell step (uses: %s)", at, step, orNone(producer.Uses))
	case producer.With["outputs"] == nil:
		k.add(p, "add with.outputs to step '"+step+"'", "%s: step '%s' declares no outputs", at, step)
	}
	for _, field := range []string{"name", "path"} {
		v, present := m[field]
		s, isString := v.(string)
		switch {
		case !present && field == "path":
		case !present:
			k.add(p, inputsHint, "%s: name is required: the artifact's path in the producer's work directory", at)
		case !isString:
			k.add(p, inputsHint, "%s: %s must be a string, got %s", at, field, yamlKind(v))
		case strings.Contains(s, "${{"):
		default:
			if err := artifactname.Check(s); err != nil {
				k.add(p, inputsHint, "%s: %s %q %v", at, field, s, err)
			}
		}
	}
}

// nodeByID is the node of the flow with that id, or nil.
func (k *check) nodeByID(id string) *Node {
	if id == "" {
		return nil
	}
	for _, list := range [][]*Node{k.def.Steps, k.def.OnError, k.def.Always} {
		for _, n := range allNodes(list) {
			if n.ID == id {
				return n
			}
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// yamlKind names the kind of a decoded YAML value for messages.
func yamlKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
