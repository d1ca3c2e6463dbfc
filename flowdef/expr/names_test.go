package expr

import (
	"errors"
	"reflect"
	"testing"
)

// An evaluation converts only the names its expression reads: a value that cannot be
// converted fails the expressions that read it and no others, and every way of reading a
// name (field, index, has(), optional, inside a comprehension) still sees it.
func TestEvalConvertsOnlyTheNamesItReads(t *testing.T) {
	env := mustEnv(t, testScope())
	act := testActivation()
	act.Vars = map[string]any{"retries": make(chan int)} // not JSON-like
	tests := []struct {
		expr string
		want any
	}{
		{"index + 1", int64(3)},
		{"inputs.n * 2", int64(6)},
		{`has(inputs.cfg) && inputs["name"] == "Ada"`, true},
		{"inputs.?missing.orValue(7)", int64(7)},
		{"inputs.tags.map(t, t + string(index))", []any{"a2", "b2", "c2"}},
		{"[1, 2].exists(x, x == item.weight / 2)", true},
		{"steps.build.output.size + run.attempt", int64(121)},
	}
	for _, tt := range tests {
		p, err := env.Compile(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		got, err := p.Eval(act)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.expr, got, tt.want)
		}
	}
	p, err := env.Compile("vars.retries > 0 || index > 0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Eval(act); !errors.Is(err, ErrEval) {
		t.Fatalf("reading vars holding a channel: got %v, want an evaluation error", err)
	}
}
