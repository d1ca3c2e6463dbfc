package startplan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/core"
)

// MaxRunsGroup is the concurrency group whose permits count the live runs of flow name
// (flow.MaxRuns).
func MaxRunsGroup(name string) string { return "flow:" + name }

// MaxRunsKeyMax bounds a rendered concurrency key (it is part of a semaphore's workflow ID).
const MaxRunsKeyMax = 200

// runsKeyRef is one {field.sub} reference of a key template.
var runsKeyRef = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}`)

// keyPart is a literal (path nil) or a reference to the input field path.
type keyPart struct {
	lit  string
	path []string
}

// parseRunsKey splits a key template into its parts: it needs at least one reference,
// and braces only as references.
func parseRunsKey(tpl string) ([]keyPart, error) {
	var parts []keyPart
	last := 0
	for _, m := range runsKeyRef.FindAllStringSubmatchIndex(tpl, -1) {
		if m[0] > last {
			parts = append(parts, keyPart{lit: tpl[last:m[0]]})
		}
		parts = append(parts, keyPart{path: strings.Split(tpl[m[2]:m[3]], ".")})
		last = m[1]
	}
	if last < len(tpl) {
		parts = append(parts, keyPart{lit: tpl[last:]})
	}
	refs := 0
	for _, p := range parts {
		if p.path != nil {
			refs++
		} else if strings.ContainsAny(p.lit, "{}") {
			return nil, fmt.Errorf("%q is not a reference: write {field} or {field.sub}", p.lit)
		}
	}
	if refs == 0 {
		return nil, errors.New("no {field} reference to the input: a constant key is MaxRuns")
	}
	return parts, nil
}

// CheckRunsKey checks a MaxRunsPerKey template: literal text and {field} or {field.sub}
// references, at least one.
func CheckRunsKey(tpl string) error {
	_, err := parseRunsKey(tpl)
	return err
}

// RenderRunsKey is the key tpl gives for the JSON input.
func RenderRunsKey(tpl string, input json.RawMessage) (string, error) {
	parts, err := parseRunsKey(tpl)
	if err != nil {
		return "", err
	}
	var in any
	if len(input) > 0 {
		d := json.NewDecoder(bytes.NewReader(input))
		d.UseNumber()
		if err := d.Decode(&in); err != nil {
			return "", fmt.Errorf("concurrency key %s: the input is not JSON: %w", tpl, err)
		}
	}
	var b strings.Builder
	for _, p := range parts {
		if p.path == nil {
			b.WriteString(p.lit)
			continue
		}
		v, name := in, strings.Join(p.path, ".")
		for _, f := range p.path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[f]
		}
		switch t := v.(type) {
		case string:
			b.WriteString(t)
		case json.Number:
			b.WriteString(t.String())
		case bool:
			fmt.Fprint(&b, t)
		case nil:
			return "", fmt.Errorf("concurrency key %s: the input has no field %s", tpl, name)
		default:
			return "", fmt.Errorf("concurrency key %s: input field %s is an object or a list: want a string, number or boolean", tpl, name)
		}
	}
	switch k := b.String(); {
	case k == "":
		return "", fmt.Errorf("concurrency key %s renders empty for this input", tpl)
	case len(k) > MaxRunsKeyMax:
		return "", fmt.Errorf("concurrency key %s renders %d bytes for this input: want at most %d", tpl, len(k), MaxRunsKeyMax)
	default:
		return k, nil
	}
}

// KeyedGroup is the concurrency group of the runs of flow info whose key is key.
func KeyedGroup(info core.WorkflowInfo, key string) string {
	return MaxRunsGroup(info.Name) + ":" + key
}

// StartGroup is the MaxRuns group of a start of info with the JSON input: the flow's
// group, or its key's. It is "" for a flow without MaxRuns.
func StartGroup(info core.WorkflowInfo, input json.RawMessage) (string, error) {
	switch {
	case info.MaxRuns < 1:
		return "", nil
	case info.MaxRunsKey == "":
		return MaxRunsGroup(info.Name), nil
	}
	key, err := RenderRunsKey(info.MaxRunsKey, input)
	if err != nil {
		return "", err
	}
	return KeyedGroup(info, key), nil
}

// StarterGroup is the keyed MaxRuns group a starter that rendered the key gave the run
// in its start options (limits), if it did.
func StarterGroup(info core.WorkflowInfo, limits map[string]int) (string, bool) {
	prefix := MaxRunsGroup(info.Name) + ":"
	for _, g := range slices.Sorted(maps.Keys(limits)) {
		if strings.HasPrefix(g, prefix) {
			return g, true
		}
	}
	return "", false
}
