package expr

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func testScope() Scope {
	return Scope{
		Inputs: []string{"n", "name", "tags", "cfg", "price"},
		Vars:   []string{"retries"},
		Steps:  []string{"build", "test"},
		Item:   true,
	}
}

func testActivation() Activation {
	return Activation{
		Inputs: map[string]any{
			"n": float64(3), "name": "Ada", "tags": []any{"a", "b", "c"},
			"cfg": map[string]any{"region": "eu", "replicas": float64(2)}, "price": 2.5,
		},
		Vars: map[string]any{"retries": float64(1)},
		Steps: map[string]StepResult{
			"build": {Output: map[string]any{"image": "app:1", "size": float64(120)}, Status: "succeeded", CostUSD: 0.25},
			"test":  {Status: "failed", Error: "2 tests failed"},
		},
		Item:  map[string]any{"id": "x1", "weight": float64(4)},
		Index: 2,
		Run:   RunInfo{ID: "r-1", Workflow: "deploy", Attempt: 1, StartedAt: "2026-12-01T10:00:00Z"},
	}
}

func mustEnv(t *testing.T, s Scope) *Env {
	t.Helper()
	env, err := NewEnv(s)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, expr string
		scope      *Scope
		want       []string // substrings of the error
		col        int      // column of the first issue, 0 to skip
	}{
		{"unknown identifier", "nope == 1", nil, []string{"undeclared reference to 'nope'", "visible: inputs, vars, steps, run, item, index"}, 1},
		{"step not in scope", "steps.deploy.output", nil, []string{`step "deploy" is not visible here`, "visible steps: build, test"}, 6},
		{"step not in scope by index", `steps["deploy"].status == "ok"`, nil, []string{`step "deploy" is not visible`}, 0},
		{"no steps visible", "steps.build.output", &Scope{}, []string{`step "build" is not visible`, "no steps are visible here"}, 0},
		{"bad step field", "steps.build.outptu", nil, []string{`steps.build has no field "outptu"`, "output, status, error, cost_usd"}, 0},
		{"var not set", "vars.count > 1", nil, []string{`variable "count" is not set`, "visible vars: retries"}, 0},
		{"input not declared", "inputs.nam", nil, []string{`input "nam" is not declared`, "visible inputs: cfg, n, name, price, tags"}, 0},
		{"run field", "run.started", nil, []string{`run has no field "started"`}, 0},
		{"item outside foreach", "item.id", &Scope{}, []string{"undeclared reference to 'item'"}, 0},
		{"syntax error column", "inputs.n + * 2", nil, []string{"Syntax error"}, 12},
		{"unbalanced", "(inputs.n", nil, []string{"Syntax error"}, 0},
		{"type mismatch", `index + "x"`, nil, []string{"no matching overload for '_+_'"}, 0},
		{"now does not exist", "now()", nil, []string{"undeclared reference to 'now'"}, 0},
		{"random does not exist", "random() > 0.5", nil, []string{"undeclared reference to 'random'"}, 0},
		{"env does not exist", `env("HOME")`, nil, []string{"undeclared reference to 'env'"}, 0},
		{"read does not exist", `read("/etc/passwd")`, nil, []string{"undeclared reference to 'read'"}, 0},
		{"several issues", "steps.a.output + vars.b", nil, []string{`step "a"`, `variable "b"`}, 0},
		{"empty", "  ", nil, []string{"empty expression"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testScope()
			if tt.scope != nil {
				s = *tt.scope
			}
			_, err := mustEnv(t, s).Compile(tt.expr)
			if err == nil {
				t.Fatalf("Compile(%q) succeeded", tt.expr)
			}
			var ce *CompileError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCompile) {
				t.Fatalf("error %T %v is not a *CompileError", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.col != 0 && ce.Issues[0].Column != tt.col {
				t.Errorf("column = %d, want %d (%v)", ce.Issues[0].Column, tt.col, ce.Issues)
			}
		})
	}
}

func TestCompileAllowed(t *testing.T) {
	for _, e := range []string{
		"inputs.anything", // unknown inputs: nil Inputs is open
		"[1, 2].exists(steps, steps > 1)",
		`has(inputs.x)`,
		`timestamp("2026-01-01T00:00:00Z") + duration("1h") > timestamp("2025-01-01T00:00:00Z")`,
	} {
		if _, err := mustEnv(t, Scope{}).Compile(e); err != nil {
			t.Errorf("Compile(%q): %v", e, err)
		}
	}
}

func TestEval(t *testing.T) {
	tests := []struct {
		expr string
		want any
	}{
		{"inputs.n + 1", int64(4)},
		{"inputs.cfg.map(k, k)", []any{"region", "replicas"}},
		{`{"b": 1, "a": 2, "c": 3, "d": 0, "e": 9}.map(k, k)`, []any{"a", "b", "c", "d", "e"}},
		{`{"b": {"z": 1, "y": 2}}.b.map(k, k)`, []any{"y", "z"}},
		{`{3: "x", 1: "y", 2: "z"}.map(k, k)`, []any{int64(1), int64(2), int64(3)}},
		{`[{"b": 1, "a": 2}][0].map(k, k)`, []any{"a", "b"}},
		{`steps.map(s, s)`, []any{"build", "test"}},
		{"inputs.price * 2.0", 5.0},
		{"inputs.name", "Ada"},
		{`inputs.name + "!"`, "Ada!"},
		{"inputs.cfg", map[string]any{"region": "eu", "replicas": int64(2)}},
		{"inputs.tags", []any{"a", "b", "c"}},
		{"size(inputs.tags)", int64(3)},
		{`has(inputs.cfg.region)`, true},
		{`has(inputs.missing)`, false},
		{`inputs.name.startsWith("A") && inputs.name.contains("d")`, true},
		{`inputs.name.lowerAscii()`, "ada"},
		{`"a,b".split(",")`, []any{"a", "b"}},
		{`inputs.tags.join("-")`, "a-b-c"},
		{`"%s has %d tags".format([inputs.name, size(inputs.tags)])`, "Ada has 3 tags"},
		{`inputs.n > 2 ? "big" : "small"`, "big"},
		{`inputs.tags.exists(t, t == "b")`, true},
		{`inputs.tags.all(t, size(t) == 1)`, true},
		{`inputs.tags.map(t, t + t)`, []any{"aa", "bb", "cc"}},
		{`inputs.tags.filter(t, t != "a")`, []any{"b", "c"}},
		{`steps.build.output.image`, "app:1"},
		{`steps.build.status == "succeeded" && steps.test.status == "failed"`, true},
		{`steps.build.cost_usd`, 0.25},
		{`steps.test.error`, "2 tests failed"},
		{`steps.test.output`, nil},
		{`vars.retries < 3`, true},
		{`item.id + ":" + string(index)`, "x1:2"},
		{`item.weight * index`, int64(8)},
		{`run.workflow + "/" + run.id`, "deploy/r-1"},
		{`run.attempt`, int64(1)},
		{`timestamp(run.started_at) < timestamp("2027-01-01T00:00:00Z")`, true},
		{`timestamp("2026-01-01T00:00:00Z") + duration("90m")`, "2026-01-01T01:30:00Z"},
		{`duration("1.5s")`, "1.5s"},
		{`{"a": [1, null, true]}`, map[string]any{"a": []any{int64(1), nil, true}}},
		{`b"hi"`, "aGk="},
		{`1u`, int64(1)},
		{`inputs.n == 3.0`, true},
		{`math.greatest([1, 5, 3])`, int64(5)},
		{`optional.of(1).orValue(2)`, int64(1)},
		{`inputs.?missing.orValue("d")`, "d"},
	}
	env := mustEnv(t, Scope{Steps: []string{"build", "test"}, Vars: []string{"retries"}, Item: true})
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			p, err := env.Compile(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Eval(testActivation())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Eval = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	env := mustEnv(t, Scope{})
	for _, e := range []string{"inputs.missing", "1 / (size(inputs) - size(inputs))"} {
		p, err := env.Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Eval(Activation{})
		var ee *EvalError
		if !errors.As(err, &ee) || !errors.Is(err, ErrEval) || errors.Is(err, ErrCostExceeded) {
			t.Errorf("Eval(%q) error = %v, want a non-cost *EvalError", e, err)
		}
	}
}

func TestEvalBoolAndList(t *testing.T) {
	env := mustEnv(t, testScope())
	p, err := env.CompileBool("inputs.n > 2")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := p.EvalBool(testActivation()); err != nil || !b {
		t.Errorf("EvalBool = %v, %v", b, err)
	}

	// Statically not a bool: refused at compile time.
	if _, err := env.CompileBool(`"yes"`); !errors.Is(err, ErrType) {
		t.Errorf("CompileBool(string) error = %v, want ErrType", err)
	}
	// Dynamically not a bool: refused at evaluation, never truthy.
	p, err = env.CompileBool("inputs.name")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.EvalBool(testActivation())
	var te *TypeError
	if !errors.As(err, &te) || te.Want != "bool" || te.Got != "string" {
		t.Errorf("EvalBool(string) error = %v, want a *TypeError", err)
	}

	p, err = env.CompileList("inputs.tags.filter(t, t > \"a\")")
	if err != nil {
		t.Fatal(err)
	}
	if l, err := p.EvalList(testActivation()); err != nil || !reflect.DeepEqual(l, []any{"b", "c"}) {
		t.Errorf("EvalList = %v, %v", l, err)
	}
	if _, err := env.CompileList("1 + 2"); !errors.Is(err, ErrType) {
		t.Errorf("CompileList(int) error = %v, want ErrType", err)
	}
	p, _ = env.CompileList("inputs.cfg")
	if _, err := p.EvalList(testActivation()); !errors.Is(err, ErrType) {
		t.Errorf("EvalList(map) error = %v, want ErrType", err)
	}
}

func TestDeterministic(t *testing.T) {
	env := mustEnv(t, testScope())
	p, err := env.Compile(`{"keys": inputs.cfg.map(k, k), "s": steps.build.output, "t": inputs.tags.map(x, x + string(index)), "m": {"b": 1, "a": 2}}`)
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Eval(testActivation())
	if err != nil {
		t.Fatal(err)
	}
	firstS, _ := renderValue(first)
	for i := 0; i < 50; i++ {
		got, err := p.Eval(testActivation())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("evaluation %d = %v, first was %v", i, got, first)
		}
		if s, _ := renderValue(got); s != firstS {
			t.Fatalf("rendering %d = %s, first was %s", i, s, firstS)
		}
	}
}

func TestCostLimit(t *testing.T) {
	env := mustEnv(t, Scope{Item: true})
	// lists.range builds a list; three nested comprehensions over it are ~10^12 steps.
	p, err := env.Compile(`lists.range(10000).all(a, lists.range(10000).all(b, lists.range(10000).all(c, a + b + c >= 0)))`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Eval(Activation{})
	var ee *EvalError
	if !errors.As(err, &ee) || !ee.Cost || !errors.Is(err, ErrCostExceeded) || !errors.Is(err, ErrEval) {
		t.Fatalf("error = %v, want a cost *EvalError", err)
	}
	if ee.Limit != DefaultCostLimit {
		t.Errorf("Limit = %d", ee.Limit)
	}

	// Over a recorded big list too.
	big := make([]any, 5000)
	for i := range big {
		big[i] = float64(i)
	}
	p, err = env.Compile(`inputs.xs.map(a, inputs.xs.filter(b, b < a).size()).size()`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = p.Eval(Activation{Inputs: map[string]any{"xs": big}}); !errors.Is(err, ErrCostExceeded) {
		t.Fatalf("error = %v, want ErrCostExceeded", err)
	}

	// A custom limit.
	small := mustEnv(t, Scope{CostLimit: 10})
	p, err = small.Compile(`[1,2,3,4,5,6,7,8,9,10].map(x, x * 2).size()`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err = p.Eval(Activation{}); !errors.Is(err, ErrCostExceeded) {
		t.Fatalf("error = %v, want ErrCostExceeded", err)
	}
}

func TestChecker(t *testing.T) {
	var c Checker
	s := testScope()
	if err := c.CheckExpr("steps.build.output.image != ''", s); err != nil {
		t.Error(err)
	}
	if err := c.CheckExpr("steps.nope.output", s); !errors.Is(err, ErrCompile) {
		t.Errorf("CheckExpr error = %v", err)
	}
	if err := c.CheckTemplate("image ${{ steps.build.output.image }}", s); err != nil {
		t.Error(err)
	}
	if err := c.CheckTemplate("x ${{ vars.nope }} ${{ steps.nope.output }}", s); !errors.Is(err, ErrCompile) ||
		!strings.Contains(err.Error(), `"nope" is not set`) || !strings.Contains(err.Error(), `step "nope"`) {
		t.Errorf("CheckTemplate error = %v", err)
	}
	if err := c.CheckTemplate("x ${{ vars.nope", s); !errors.Is(err, ErrTemplate) {
		t.Errorf("CheckTemplate error = %v", err)
	}
}
