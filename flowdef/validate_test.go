package flowdef

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// validate parses src and validates it; it returns the error text ("" when valid).
func validate(t *testing.T, reg Registry, src string, opts ...Option) string {
	t.Helper()
	def, err := Check("f.yaml", []byte(src), reg, opts...)
	if def == nil {
		t.Fatalf("parse: %v", err)
	}
	if err == nil {
		return ""
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("want a *ValidationError, got %T", err)
	}
	return err.Error()
}

func TestValidateRules(t *testing.T) {
	reg := &StaticRegistry{Actions: []string{"alpha"}, ItemProviders: []string{"tickets"}, GateTypes: []string{"slack_reaction"}}
	for _, tt := range []struct {
		name string
		src  string
		want []string // substrings; empty means valid
	}{
		{"valid", "name: ok\nsteps:\n  - {id: a, uses: alpha}\n  - {id: b, foreach: {provider: tickets, steps: [{uses: shell}]}}\n  - {id: c, gate: {type: poll, resolver: slack_reaction}}\n", nil},
		{"missing action", "name: x\nsteps: [{id: a, uses: missing_agent}]\n",
			[]string{"f.yaml:2:23: step 'a': no registered action 'missing_agent' (hint: register an action named missing_agent on the worker (flow.Worker.RegisterActivity) or add a fallback action)"}},
		{"missing item provider", "name: x\nsteps: [{id: e, foreach: {provider: nope, steps: [{uses: shell}]}}]\n", []string{"no registered item provider 'nope'"}},
		{"unregistered gate type", "name: x\nsteps: [{id: g, gate: {type: poll, resolver: fictional_type}}]\n", []string{"no registered gate resolver 'fictional_type'"}},
		{"quality gate needs no resolver", "name: x\nsteps: [{id: s, uses: agent}, {id: q, gate: {type: quality, source: s, threshold: 80}}]\n", nil},
		{"missing name and steps", "version: 1\n", []string{"missing name", "no steps"}},
		{"duplicate id across sections", "name: x\nsteps: [{id: a, uses: shell}]\nalways: [{id: a, uses: shell}]\n", []string{"3:15: duplicate node id 'a' (first at 2:14)"}},
		{"goto target", "name: x\nsteps: [{id: a, uses: shell, on_error: goto b}]\n", []string{"goto target 'b' does not exist"}},
		{"goto forward ok", "name: x\nsteps: [{id: a, uses: shell, on_error: goto b}, {id: b, uses: shell}]\n", nil},
		{"step before reference", "name: x\nsteps: [{id: a, check: steps.b.output}, {id: b, uses: shell}]\n", []string{`step "b" is not visible here (no steps are visible here)`}},
		{"step inside one branch only", "name: x\nsteps:\n  - {id: i, if: 'true', then: [{id: t, uses: shell}]}\n  - {id: u, check: steps.t.output}\n", []string{`step "t" is not visible here`}},
		{"step in both branches", "name: x\nsteps:\n  - {id: i, if: 'true', then: [{id: t, uses: shell}], else: [{id: t2, uses: shell}]}\n  - {id: u, check: steps.i.output}\n", nil},
		{"switch with default: common ids only", "name: x\nsteps:\n  - {id: s, switch: '1', cases: [{value: 1, steps: [{id: a, uses: shell}]}], default: [{id: b, uses: shell}]}\n  - {id: u, check: steps.a.output}\n", []string{`step "a" is not visible here`}},
		{"parallel branches visible after", "name: x\nsteps:\n  - {id: p, parallel: [{id: l, uses: shell}, {id: r, uses: shell}]}\n  - {id: u, check: steps.l.output && steps.r.output}\n", nil},
		{"parallel min_success hides branches", "name: x\nsteps:\n  - {id: p, parallel: [{id: l, uses: shell}, {id: r, uses: shell}], min_success: 1}\n  - {id: u, check: steps.l.output}\n", []string{`step "l" is not visible here`}},
		{"do-while body visible after", "name: x\nsteps:\n  - {id: l, loop: {until: steps.b.output, max_iterations: 3, steps: [{id: b, uses: shell}]}}\n  - {id: u, check: steps.b.output}\n", nil},
		{"foreach body not visible after", "name: x\nsteps:\n  - {id: f, foreach: {over: '[1]', steps: [{id: b, uses: shell}]}}\n  - {id: u, check: steps.b.output}\n", []string{`step "b" is not visible here`}},
		{"item outside foreach", "name: x\nsteps: [{id: a, check: item > 1}]\n", []string{"undeclared reference to 'item'"}},
		{"item renamed", "name: x\nsteps: [{id: f, foreach: {over: '[1]', as: n, steps: [{id: a, check: n > 0}]}}]\n", nil},
		{"outer item in a nested loop", "name: x\nsteps: [{id: f, foreach: {over: '[1]', as: n, steps: [{id: l, loop: {over: '[2]', steps: [{id: a, check: n < item}]}}]}}]\n", nil},
		{"outer item after its foreach", "name: x\nsteps: [{id: f, foreach: {over: '[1]', as: n, steps: [{id: a, check: n > 0}]}}, {id: b, check: n > 0}]\n", []string{"undeclared reference to 'n'"}},
		{"while needs max_iterations", "name: x\nsteps: [{id: l, loop: {while: 'true', steps: [{uses: shell}]}}]\n", []string{"loop needs a positive max_iterations"}},
		{"unknown gate type", "name: x\nsteps: [{id: g, gate: {type: human_approval}}]\n", []string{"unknown gate type 'human_approval'"}},
		{"input gate schema", "name: x\nsteps: [{id: g, gate: {type: input, schema: {type: 3}}}]\n", []string{"gate 'g': schema: invalid JSON Schema"}},
		{"money", "name: x\nlimits: {max_cost_usd: 'abc'}\nsteps: [{uses: agent}]\n", []string{"limits.max_cost_usd: USD amount \"abc\" is not a number"}},
		{"duration", "name: x\nsteps: [{sleep: 3 days}]\n", []string{"sleep: bad duration \"3 days\""}},
		{"day unit", "name: x\nlimits: {wall_time: 2d12h}\nsteps: [{sleep: 1d}]\n", nil},
		{"send needs a target", "name: x\nsteps: [{send: {signal: s}}]\n", []string{"send needs exactly one of run and mailbox"}},
		{"min_success range", "name: x\nsteps: [{parallel: [{uses: shell}], min_success: 3}]\n", []string{"min_success 3 out of range"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := validate(t, reg, tt.src)
			if len(tt.want) == 0 {
				if got != "" {
					t.Fatalf("want valid, got:\n%s", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
		})
	}
}

func TestValidateFallbackAcceptsAnyAction(t *testing.T) {
	src := "name: x\nsteps: [{uses: anything}, {parallel: [{uses: whatever}]}]\n"
	if got := validate(t, &StaticRegistry{Fallback: true}, src); got != "" {
		t.Fatalf("with a fallback every action validates, got:\n%s", got)
	}
	if got := validate(t, &StaticRegistry{}, src); strings.Count(got, "no registered action") != 2 {
		t.Fatalf("want both actions reported, got:\n%s", got)
	}
}

func TestValidateCollectsEverything(t *testing.T) {
	src := "name: x\nsteps:\n  - {uses: a1}\n  - {uses: a2}\n  - {foreach: {provider: p1, steps: [{uses: a3}]}}\n  - {gate: {type: poll, resolver: g1}}\n"
	got := Errors(func() error { _, err := Check("f.yaml", []byte(src), &StaticRegistry{}); return err }())
	if len(got) != 5 {
		t.Fatalf("want 5 errors, got %d: %v", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Pos.Line < got[i-1].Pos.Line {
			t.Fatalf("errors not in order: %v", got)
		}
	}
}

// countingRegistry counts loads and expression checks per sub-flow.
type countingRegistry struct {
	StaticRegistry
	loads map[string]int
}

func (r *countingRegistry) LoadDefinition(name string) (*Definition, error) {
	r.loads[name]++
	return r.StaticRegistry.LoadDefinition(name)
}

func defs(t *testing.T, srcs map[string]string) map[string]*Definition {
	out := map[string]*Definition{}
	for name, src := range srcs {
		d, err := Parse(name+".yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = d
	}
	return out
}

func TestSubFlowsValidatedOnceWithPrefix(t *testing.T) {
	reg := &countingRegistry{loads: map[string]int{}, StaticRegistry: StaticRegistry{Definitions: defs(t, map[string]string{
		"sub_wf": "name: sub_wf\nsteps: [{id: x, uses: missing_in_sub}]\n",
	})}}
	src := "name: root\nsteps:\n  - {id: a, call: sub_wf}\n  - {id: b, call: sub_wf}\n  - {id: c, foreach: {over: '[1]', call: sub_wf}}\n"
	got := validate(t, reg, src)
	if n := strings.Count(got, "missing_in_sub'"); n != 1 {
		t.Fatalf("the sub-flow's error is reported %d times, want once:\n%s", n, got)
	}
	if !strings.Contains(got, "sub_wf.yaml:2:23: in sub-flow 'sub_wf': step 'x': no registered action 'missing_in_sub'") {
		t.Fatalf("missing prefixed error with the sub-flow's position:\n%s", got)
	}
	if reg.loads["sub_wf"] != 1 {
		t.Fatalf("sub_wf loaded %d times, want 1", reg.loads["sub_wf"])
	}
}

func TestSubFlowNestedPrefixAndInMemoryOnly(t *testing.T) {
	reg := &StaticRegistry{Actions: []string{"alpha"}, Definitions: defs(t, map[string]string{
		"a": "name: a\nsteps: [{call: b}]\n",
		"b": "name: b\nsteps: [{id: s, sleep: soon}]\n",
		"c": "name: c\nsteps: [{uses: alpha}]\n",
	})}
	got := validate(t, reg, "name: root\nsteps: [{call: a}]\n")
	if !strings.Contains(got, "in sub-flow 'a': in sub-flow 'b': sleep 's': sleep: bad duration") {
		t.Fatalf("want chained prefixes, got:\n%s", got)
	}
	if got := validate(t, reg, "name: root\nsteps: [{call: c}]\n"); got != "" {
		t.Fatalf("an in-memory registry is enough, got:\n%s", got)
	}
}

func TestCycles(t *testing.T) {
	reg := &StaticRegistry{Definitions: defs(t, map[string]string{
		"cycle_wf": "name: cycle_wf\nsteps: [{call: cycle_wf}]\n",
		"a":        "name: a\nsteps: [{foreach: {over: '[1]', call: b}}]\n",
		"b":        "name: b\nsteps: [{call: a}]\n",
	})}
	got := validate(t, reg, "name: cycle_wf\nsteps: [{call: cycle_wf}]\n")
	if !strings.Contains(got, "circular flow reference: cycle_wf -> cycle_wf") {
		t.Fatalf("self call: %s", got)
	}
	got = validate(t, reg, "name: root\nsteps: [{call: a}]\n")
	if !strings.Contains(got, "circular flow reference: root -> a -> b -> a") {
		t.Fatalf("cycle through foreach: %s", got)
	}
}

func TestDepth(t *testing.T) {
	srcs := map[string]string{}
	for i := 1; i <= 6; i++ {
		srcs[fmt.Sprintf("d%d", i)] = fmt.Sprintf("name: d%d\nsteps: [{call: d%d}]\n", i, i+1)
	}
	srcs["d7"] = "name: d7\nsteps: [{uses: shell}]\n"
	reg := &StaticRegistry{Definitions: defs(t, srcs)}
	// root -> d1 .. d4: five definitions, the limit.
	srcs["d4"] = "name: d4\nsteps: [{uses: shell}]\n"
	ok := &StaticRegistry{Definitions: defs(t, srcs)}
	if got := validate(t, ok, "name: root\nsteps: [{call: d1}]\n"); got != "" {
		t.Fatalf("depth 5 is allowed, got:\n%s", got)
	}
	got := validate(t, reg, "name: root\nsteps: [{call: d1}]\n")
	if !strings.Contains(got, "flow nesting depth exceeds maximum of 5: root -> d1 -> d2 -> d3 -> d4 -> d5") {
		t.Fatalf("got:\n%s", got)
	}
	if got := validate(t, reg, "name: root\nsteps: [{call: d1}]\n", WithMaxDepth(10)); got != "" {
		t.Fatalf("WithMaxDepth(10): %s", got)
	}
}

func TestCallGoFlowAndMissing(t *testing.T) {
	reg := &StaticRegistry{GoFlows: []string{"go_flow"}}
	if got := validate(t, reg, "name: x\nsteps: [{call: go_flow}]\n"); got != "" {
		t.Fatalf("a Go flow is a valid call target: %s", got)
	}
	got := validate(t, reg, "name: x\nsteps: [{id: c, call: nowhere}]\n")
	if !strings.Contains(got, "call 'c': no flow named 'nowhere'") {
		t.Fatalf("got:\n%s", got)
	}
}

// failingExpr reports every expression containing "bad".
type failingExpr struct{ calls int }

func (f *failingExpr) CheckExpr(e string, s Scope) error {
	f.calls++
	if strings.Contains(e, "bad") {
		return errors.New("type error: bad")
	}
	return nil
}

func (f *failingExpr) CheckTemplate(s string, sc Scope) error { return f.CheckExpr(s, sc) }

func TestExpressionsInterface(t *testing.T) {
	ex := &failingExpr{}
	got := validate(t, &StaticRegistry{}, "name: x\nsteps:\n  - id: a\n    uses: shell\n    if: bad == 1\n    with: {cmd: 'ok', other: 'bad'}\n", WithExpressions(ex))
	for _, w := range []string{"f.yaml:5:9: step 'a': if: type error: bad", "f.yaml:6:30: step 'a': with.other: type error: bad"} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
	if ex.calls != 3 {
		t.Errorf("calls = %d, want 3", ex.calls)
	}
}

// TestConcurrencyKeyTemplate: concurrency.key becomes flow.MaxRunsPerKey's template, or
// the reason it cannot.
func TestConcurrencyKeyTemplate(t *testing.T) {
	for _, tc := range []struct{ key, want, wantErr string }{
		{key: "${{ inputs.repo }}", want: "{repo}"},
		{key: "review-${{inputs.org}}/${{ inputs.pr.repo }}", want: "review-{org}/{pr.repo}"},
		{key: "all", wantErr: "no ${{ inputs.<field> }} reference"},
		{key: "${{ inputs.repo.lowerAscii() }}", wantErr: `only ${{ inputs.<field> }} references are allowed`},
		{key: "${{ vars.x }}", wantErr: `"${{ vars.x }}": only`},
		{key: "{repo}", wantErr: `"{repo}": only`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			got, err := (&Concurrency{Key: tc.key}).KeyTemplate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("KeyTemplate(%q) = %q, %v; want error %q", tc.key, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("KeyTemplate(%q) = %q, %v; want %q", tc.key, got, err, tc.want)
			}
		})
	}
}

func TestConcurrencyKeyNamesDeclaredInputs(t *testing.T) {
	src := `
name: keyed
inputs: {type: object, properties: {repo: {type: string}}}
concurrency: {key: "${{ inputs.org }}/${{ inputs.repo }}"}
steps:
  - {id: hello, uses: shell, with: {command: "echo hi"}}
`
	_, err := Check("keyed.yaml", []byte(src), &StaticRegistry{})
	if err == nil || !strings.Contains(err.Error(), "keyed.yaml:4:20: concurrency.key: inputs has no field 'org' (hint: declare it under inputs.properties, or refer to one of: repo)") {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "'repo'") {
		t.Fatalf("repo is declared: %v", err)
	}
}

func TestValidateServices(t *testing.T) {
	src := "name: x\nsteps:\n  - {id: a, uses: http, service: github, with: {url: 'http://x'}}\n  - {id: b, uses: shell, service: nope, with: {command: hi}}\n"
	got := validate(t, &StaticRegistry{Services: []string{"github"}}, src)
	want := "f.yaml:4:35: step 'b': no declared service 'nope' (hint: declare a service named nope on the workers (flow.WorkerOptions.Services))"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := validate(t, &StaticRegistry{}, src); got != "" {
		t.Errorf("services not known (offline): any name is accepted, got %q", got)
	}
}
