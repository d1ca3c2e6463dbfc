package flow

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/cronspec"
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
	cat := &Catalog{TaskQueue: "q", Workflows: []WorkflowInfo{{Name: "ship", InputType: "fuzzStartInput", InputSchema: typeschema.For(reflect.TypeFor[fuzzStartInput]())}}}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	f.Add([]byte(`{"version":"1.2"}`), "", "", "team=web", "", "")
	f.Add([]byte(`{"version":"1.2","count":"x"}`), "run-1", "", "", "gpu", "deploys")
	f.Add([]byte(`{`), "run\x01", "", "", "", "")
	f.Add([]byte(`{}`), "ключ", "", "Team=web", "GPU", "Key")
	f.Add([]byte(` null `), "", "k", "a=b=c,a=d", "gpu,gpu", "")
	f.Add([]byte(`{"version":"1","extra":true}`), " ", "", "=x", "a,b,c,d,e", "")
	f.Add([]byte(`[1e400]`), "/x", "key", "a=\n", "", "a b")
	f.Fuzz(func(t *testing.T, input []byte, id, key, labels, tags, concKey string) {
		opts := StartOptions{ID: id, IdempotencyKey: key, ConcurrencyKey: concKey}
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
		p, err := planStart(cat, ClientOptions{TaskQueue: "q"}, "ship", json.RawMessage(input), opts, now)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Workflow != "ship" || ie.Err == nil || ie.Err.Error() == "" {
				t.Fatalf("refusal %T %v does not name the flow", err, err)
			}
			return
		}
		if p.id == "" || len(p.id) > maxRunIDLen || validateRunID(p.id) != nil {
			t.Fatalf("run ID %q accepted", p.id)
		}
		for i := 0; i < len(p.id); i++ {
			if p.id[i] < ' ' || p.id[i] > '~' {
				t.Fatalf("run ID %q is not printable ASCII", p.id)
			}
		}
		if !json.Valid(p.input) || checkInput(cat.Workflows[0].InputSchema, p.input) != nil {
			t.Fatalf("input %q accepted as %q, which does not match", input, p.input)
		}
		if again, err := encodeInput(p.input); err != nil || string(again) != string(p.input) {
			t.Fatalf("input %q is not compact: %q, %v", p.input, again, err)
		}
		for _, kv := range labelList(p.runOpts.Labels) {
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
		if err := validateName(name); err != nil {
			if !strings.Contains(err.Error(), "flow name") {
				t.Fatalf("validateName(%q): %v", name, err)
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

// FuzzSchedule: schedules are cron expressions from Define options. The option never
// panics (it did on "TZ="); it accepts what cronspec.Parse accepts, keeps the expression
// as given, and a refusal names the schedule.
func FuzzSchedule(f *testing.F) {
	for _, s := range []string{"0 9 * * 1-5", "*/15 * * * *", "@every 10m", "@hourly", "@daily", "61 * * * *", "* * * *", "", "@every -1s", "TZ=Europe/Paris 0 9 * * *", "CRON_TZ=x * * * * *", "CRON_TZ=UTC", "0 0 31 2 *", "1-0 * * * *", "*/0 * * * *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		var info WorkflowInfo
		err := Schedule(spec)(&info)
		_, cronErr := cronspec.Parse(spec)
		if (err == nil) != (cronErr == nil) {
			t.Fatalf("Schedule(%q): %v, but cron says %v", spec, err, cronErr)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "schedule ") {
				t.Fatalf("Schedule(%q): %v does not name the schedule", spec, err)
			}
			return
		}
		if len(info.Schedules) != 1 || info.Schedules[0].Spec != spec {
			t.Fatalf("Schedule(%q) kept %+v", spec, info.Schedules)
		}
	})
}
