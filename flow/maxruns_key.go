package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"
)

// maxRunsKeyMax bounds a rendered concurrency key (it is part of a semaphore's workflow ID).
const maxRunsKeyMax = 200

// MaxRunsPerKey is MaxRuns per key: at most n live runs of the flow for each value of key,
// a template of the run's input: literal text and {field} or {field.sub} references to
// fields of the input's JSON ("{repo}", "{org}/{repo}"). Runs whose keys differ do not
// limit each other; overflow (OverflowQueue, OverflowRefuse, OverflowReplace) applies
// among the runs of one key, so OverflowReplace cancels the oldest live run of that key.
// A referenced field must be a string, number or boolean; a missing one, or a key that
// renders empty or longer than 200 bytes, refuses the start with an *InputError.
//
// Where the key is computed: the key is data in the catalog (WorkflowInfo.MaxRunsKey),
// not code, so every starter computes it from the JSON input it sends: flowclient.Client.Start (and
// flowctl start, once starts, triggered and signal starts) renders it, checks the
// semaphore of the group "flow:NAME:KEY" for refuse and replace at admission, and hands
// the group to the run in its start options. A run started without one (a schedule, a
// parent's Child step) renders the key itself in workflow code from its input as its
// input type encodes it (json.Marshal of the decoded input, so a struct field the input
// lacked renders as its zero value rather than refusing), recorded once (a SideEffect),
// and queues; an input that gives no key fails that run before any step. n must be at
// least 1.
func MaxRunsPerKey(key string, n int, overflow Overflow) Option {
	return func(i *WorkflowInfo) error {
		if _, err := parseRunsKey(key); err != nil {
			return fmt.Errorf("max runs per key %q: %w", key, err)
		}
		if err := MaxRuns(n, overflow)(i); err != nil {
			return err
		}
		i.MaxRunsKey = key
		return nil
	}
}

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

// renderRunsKey is the key tpl gives for the JSON input.
func renderRunsKey(tpl string, input json.RawMessage) (string, error) {
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
	case len(k) > maxRunsKeyMax:
		return "", fmt.Errorf("concurrency key %s renders %d bytes for this input: want at most %d", tpl, len(k), maxRunsKeyMax)
	default:
		return k, nil
	}
}

// keyedGroup is the concurrency group of the runs of flow info whose key is key.
func keyedGroup(info WorkflowInfo, key string) string { return maxRunsGroup(info.Name) + ":" + key }

// startGroup is the MaxRuns group of a start of info with the JSON input: the flow's
// group, or its key's. It is "" for a flow without MaxRuns.
func startGroup(info WorkflowInfo, input json.RawMessage) (string, error) {
	switch {
	case info.MaxRuns < 1:
		return "", nil
	case info.MaxRunsKey == "":
		return maxRunsGroup(info.Name), nil
	}
	key, err := renderRunsKey(info.MaxRunsKey, input)
	if err != nil {
		return "", err
	}
	return keyedGroup(info, key), nil
}

// starterGroup is the keyed MaxRuns group a starter that rendered the key gave the run
// in its start options (limits), if it did.
func starterGroup(info WorkflowInfo, limits map[string]int) (string, bool) {
	prefix := maxRunsGroup(info.Name) + ":"
	for _, g := range slices.Sorted(maps.Keys(limits)) {
		if strings.HasPrefix(g, prefix) {
			return g, true
		}
	}
	return "", false
}

// runKeyGroup is the keyed MaxRuns group of a run no starter gave one: rendered from its
// input as its input type encodes it, recorded once (a SideEffect), so a replay uses the
// group the run acquired even if the flow's key changed since.
func (p *permitsPart) runKeyGroup(c *Context) (string, error) {
	info := c.run.info
	type rendered struct{ Group, Err string }
	var r rendered
	enc := workflow.SideEffect(c.wctx, func(workflow.Context) any {
		raw, err := json.Marshal(c.run.setup.input)
		if err != nil {
			return rendered{Err: fmt.Sprintf("concurrency key %s: encode the input: %v", info.MaxRunsKey, err)}
		}
		g, err := startGroup(info, raw)
		if err != nil {
			return rendered{Err: err.Error()}
		}
		return rendered{Group: g}
	})
	if err := enc.Get(&r); err != nil {
		return "", fmt.Errorf("concurrency key %s: %w", info.MaxRunsKey, err)
	}
	if r.Err != "" {
		return "", Permanent(errors.New(r.Err))
	}
	return r.Group, nil
}
