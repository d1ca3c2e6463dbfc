package flowdef

import (
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, file, src string) *Definition {
	t.Helper()
	def, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return def
}

func TestParsePositions(t *testing.T) {
	def := mustParse(t, "p.yaml", `name: p
limits:
  wall_time: 1h
steps:
  - id: a
    uses: shell
    timeout: 5s
  - id: b
    foreach:
      over: inputs.xs
      steps:
        - id: c
          sleep: 1s
`)
	a, b := def.Steps[0], def.Steps[1]
	c := b.Foreach.Steps[0]
	for _, tt := range []struct {
		name      string
		got       Pos
		line, col int
	}{
		{"definition", def.Pos, 1, 1},
		{"name value", def.Fields["name"], 1, 7},
		{"limits", def.Limits.Pos, 3, 3},
		{"wall_time", def.Limits.Fields["wall_time"], 3, 14},
		{"node a", a.Pos, 5, 5},
		{"a.timeout", a.Fields["timeout"], 7, 14},
		{"foreach", b.Foreach.Pos, 10, 7},
		{"c", c.Pos, 12, 11},
		{"c.sleep", c.Fields["sleep"], 13, 18},
	} {
		if tt.got.Line != tt.line || tt.got.Col != tt.col || tt.got.File != "p.yaml" {
			t.Errorf("%s at %v, want p.yaml:%d:%d", tt.name, tt.got, tt.line, tt.col)
		}
	}
	if a.Kind != KindStep || b.Kind != KindForeach || c.Kind != KindSleep {
		t.Errorf("kinds %s %s %s", a.Kind, b.Kind, c.Kind)
	}
}

func TestParseJSON(t *testing.T) {
	src := `{
  "name": "j",
  "steps": [
    {"id": "a", "uses": "shell", "with": {"command": "ls"}},
    {"id": "b", "sleep": "1s", "colour": "red"}
  ]
}`
	def, err := Parse("j.json", []byte(src))
	if def == nil || def.Steps[0].Uses != "shell" || def.Steps[0].With["command"] != "ls" {
		t.Fatalf("bad decode: %+v", def)
	}
	es := Errors(err)
	if len(es) != 1 || es[0].Pos.Line != 5 || es[0].Pos.Col != 32 || !strings.Contains(es[0].Message, "unknown field 'colour'") {
		t.Fatalf("errors = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string // "line:col: message substring"
	}{
		{"unknown envelope field", "name: x\nstep: []\n", []string{"2:1: unknown field 'step' in the definition"}},
		{"unknown node field with suggestion", "name: x\nsteps:\n  - uses: shell\n    wiht: {}\n", []string{"4:5: unknown field 'wiht' in a step node"}},
		{"bad int", "name: x\npriority: 1.5\nsteps: [{uses: shell}]\n", []string{"2:11: priority: want an integer, got a number"}},
		{"bad bool", "name: x\nonce: 'yes'\nsteps: [{uses: shell}]\n", []string{"2:7: once: want a boolean, got a string"}},
		{"bad list", "name: x\nsteps: {uses: shell}\n", []string{"2:8: steps: want a list, got a mapping"}},
		{"node not mapping", "name: x\nsteps: [shell]\n", []string{"2:9: steps[0]: want a mapping, got a string"}},
		{"duplicate key", "name: x\nname: y\nsteps: [{uses: shell}]\n", []string{"2:1: syntax error: mapping key \"name\" already defined"}},
		{"on_error type", "name: x\nsteps: [{uses: shell, on_error: 3}]\n", []string{"on_error: want a string, got an integer"}},
		{"two documents", "name: x\n---\nname: y\n", []string{"1:1: file holds 2 YAML documents"}},
		{"empty", "", []string{"1:1: file is empty"}},
		{"syntax", "name: [x\n", []string{"syntax error"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(tt.src))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("want a *ValidationError, got %v", err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("missing %q in\n%s", w, msg)
				}
			}
		})
	}
}

func TestParseKeepsDigitsOfAmountsAndVersions(t *testing.T) {
	def := mustParse(t, "v.yaml", "name: v\nversion: 1.10\nlimits: {max_cost_usd: 2.50}\nsteps: [{uses: agent, cost_limit: 0.10}]\n")
	if def.Version != "1.10" || def.Limits.MaxCostUSD != "2.50" || def.Steps[0].CostLimit != "0.10" {
		t.Fatalf("got %q %q %q", def.Version, def.Limits.MaxCostUSD, def.Steps[0].CostLimit)
	}
}

func TestParseOnError(t *testing.T) {
	def := mustParse(t, "o.yaml", "name: o\nsteps:\n  - {id: a, uses: shell, on_error: goto b}\n  - {id: b, uses: shell, on_error: continue}\n")
	if o := def.Steps[0].OnError; o.Action != ActionGoto || o.Target != "b" {
		t.Fatalf("got %+v", o)
	}
	if o := def.Steps[1].OnError; o.Action != ActionContinue {
		t.Fatalf("got %+v", o)
	}
}

func TestHash(t *testing.T) {
	yamlDef := mustParse(t, "a.yaml", "# comment\nname: h\nsteps:\n  - id: a\n    uses: shell\n")
	jsonDef := mustParse(t, "a.json", `{"steps": [{"uses": "shell", "id": "a"}], "name": "h"}`)
	other := mustParse(t, "b.yaml", "name: h\nsteps:\n  - id: a\n    uses: http\n")
	if yamlDef.Hash() != jsonDef.Hash() {
		t.Fatal("formatting, comments, key order or YAML/JSON changed the hash")
	}
	if yamlDef.Hash() == other.Hash() {
		t.Fatal("a different value gave the same hash")
	}
	if len(yamlDef.Hash()) != 64 {
		t.Fatalf("hash %q is not hex sha256", yamlDef.Hash())
	}
}

func TestErrorFormat(t *testing.T) {
	e := &ValidationError{Errors: []Error{
		{Pos: Pos{File: "f.yaml", Line: 3, Col: 5}, Message: "bad", Hint: "fix it"},
		{Pos: Pos{File: "f.yaml", Line: 4, Col: 1}, Message: "worse"},
	}}
	want := "f.yaml:3:5: bad (hint: fix it)\nf.yaml:4:1: worse"
	if e.Error() != want {
		t.Fatalf("got %q", e.Error())
	}
}
