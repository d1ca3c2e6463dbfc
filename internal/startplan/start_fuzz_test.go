package startplan

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/typeschema"
)

type fuzzStartInput struct {
	Version string   `json:"version"`
	Env     string   `json:"env,omitempty"`
	Count   int      `json:"count,omitempty"`
	Tags    []string `json:"tags,omitempty"`
}

// FuzzPlanStart: what flowctl start and Client.Start take from outside (the input JSON,
// a run ID, an idempotency key, labels, worker tags and a concurrency key) goes through
// planStart before anything reaches the server. It never panics; a refusal is an
// *InputError naming the flow; an accepted start has a run ID the Temporal client can send
// (printable ASCII, at most 1000 bytes), an input that is compact JSON matching the flow's
// schema, and labels kept as given.
func FuzzPlanStart(f *testing.F) {
	cat := &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "ship", InputType: "fuzzStartInput", InputSchema: typeschema.ForStart(reflect.TypeFor[fuzzStartInput]())}}}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	f.Add([]byte(`{"version":"1.2"}`), "", "", "team=web", "", "")
	f.Add([]byte(`{"version":"1.2","count":"x"}`), "run-1", "", "", "gpu", "deploys")
	f.Add([]byte(`{`), "run\x01", "", "", "", "")
	f.Add([]byte(`{}`), "ключ", "", "Team=web", "GPU", "Key")
	f.Add([]byte(` null `), "", "k", "a=b=c,a=d", "gpu,gpu", "")
	f.Add([]byte(`{"version":"1","extra":true}`), " ", "", "=x", "a,b,c,d,e", "")
	f.Add([]byte(`[1e400]`), "/x", "key", "a=\n", "", "a b")
	f.Fuzz(func(t *testing.T, input []byte, id, key, labels, tags, concKey string) {
		opts := core.StartOptions{ID: id, IdempotencyKey: key, ConcurrencyKey: concKey}
		if labels != "" {
			opts.Labels = map[string]string{}
			for _, pair := range strings.Split(labels, ",") {
				k, v, _ := strings.Cut(pair, "=")
				opts.Labels[k] = v
			}
		}
		if tags != "" {
			opts.WorkerTags = strings.Split(tags, ",")
		}
		p, err := New(cat, Starter{TaskQueue: "q"}, "ship", json.RawMessage(input), opts, false, now)
		if err != nil {
			var ie *core.InputError
			if !errors.As(err, &ie) || ie.Workflow != "ship" || ie.Err == nil || ie.Err.Error() == "" {
				t.Fatalf("refusal %T %v does not name the flow", err, err)
			}
			return
		}
		if p.ID == "" || len(p.ID) > protocol.MaxRunIDLen || validateRunID(p.ID) != nil {
			t.Fatalf("run ID %q accepted", p.ID)
		}
		for i := 0; i < len(p.ID); i++ {
			if p.ID[i] < ' ' || p.ID[i] > '~' {
				t.Fatalf("run ID %q is not printable ASCII", p.ID)
			}
		}
		if !json.Valid(p.Input) || CheckInput(cat.Workflows[0].InputSchema, p.Input) != nil {
			t.Fatalf("input %q accepted as %q, which does not match", input, p.Input)
		}
		if again, err := EncodeInput(p.Input); err != nil || string(again) != string(p.Input) {
			t.Fatalf("input %q is not compact: %q, %v", p.Input, again, err)
		}
		for _, kv := range LabelList(p.RunOpts.Labels) {
			k, v, _ := strings.Cut(kv, "=")
			if got, ok := opts.Labels[k]; !ok || got != v || !labelKeyPattern.MatchString(k) {
				t.Fatalf("label %q kept from %q", kv, labels)
			}
		}
	})
}

// FuzzFlowName: flow names come from flowctl arguments, definitions and Define. Accepted
// names are 1-200 ASCII letters, digits and _.-/, starting with a letter or digit; a
// refusal quotes the name.
func FuzzFlowName(f *testing.F) {
	for _, s := range []string{"hello", "a/b", "-x", "", "Ship.v2", "ключ", "a b", strings.Repeat("n", 201), "x\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if err := ValidateName(name); err != nil {
			if !strings.Contains(err.Error(), "flow name") {
				t.Fatalf("ValidateName(%q): %v", name, err)
			}
			return
		}
		if len(name) == 0 || len(name) > 200 || strings.IndexFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.-/", r))
		}) >= 0 || strings.ContainsRune("_.-/", rune(name[0])) {
			t.Fatalf("flow name %q accepted", name)
		}
	})
}
