package expr

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	tests := []struct {
		in      string
		exprs   []string
		literal bool
	}{
		{"plain", nil, true},
		{"$${{ not an expr }}", nil, true},
		{"a ${{ inputs.x }} b ${{inputs.y}}", []string{"inputs.x", "inputs.y"}, false},
		{`${{ {"a": {"b": 1}}["a"] }}`, []string{`{"a": {"b": 1}}["a"]`}, false},
		{`${{ "}}" + inputs.x }}`, []string{`"}}" + inputs.x`}, false},
		{`${{ '}}' }}`, []string{`'}}'`}, false},
	}
	for _, tt := range tests {
		tpl, err := ParseTemplate(tt.in)
		if err != nil {
			t.Fatalf("ParseTemplate(%q): %v", tt.in, err)
		}
		if got := tpl.Exprs(); !reflect.DeepEqual(got, tt.exprs) || tpl.IsLiteral() != tt.literal {
			t.Errorf("ParseTemplate(%q) exprs = %q literal %v", tt.in, got, tpl.IsLiteral())
		}
	}
	for _, tt := range []struct {
		in     string
		offset int
	}{
		{"hi ${{ inputs.x", 3},
		{"ok ${{ a }} then ${{ b } c", 17},
		{`${{ "}} }}`, 0},
		{"x ${{ }}", 2},
	} {
		_, err := ParseTemplate(tt.in)
		var te *TemplateError
		if !errors.As(err, &te) || !errors.Is(err, ErrTemplate) || te.Offset != tt.offset {
			t.Errorf("ParseTemplate(%q) error = %v, want a *TemplateError at offset %d", tt.in, err, tt.offset)
		}
	}
}

func TestRender(t *testing.T) {
	env := mustEnv(t, testScope())
	act := testActivation()
	tests := []struct {
		in, want string
	}{
		{"plain", "plain"},
		{"$${{ x }} and ${{ inputs.name }}", "${{ x }} and Ada"},
		{"n=${{ inputs.n }} p=${{ inputs.price }} ok=${{ inputs.n > 1 }}", "n=3 p=2.5 ok=true"},
		{"cfg=${{ inputs.cfg }}", `cfg={"region":"eu","replicas":2}`},
		{"tags=${{ inputs.tags }}", `tags=["a","b","c"]`},
		{"none=[${{ steps.test.output }}]", "none=[]"},
		{"html=${{ '<a&b>' }} ${{ ['<'] }}", `html=<a&b> ["<"]`},
		{"${{ item.id }}#${{ index }}", "x1#2"},
	}
	for _, tt := range tests {
		tpl, err := ParseTemplate(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if err := tpl.Check(env); err != nil {
			t.Fatal(err)
		}
		got, err := tpl.Render(env, act)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Render(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRenderValue(t *testing.T) {
	env := mustEnv(t, testScope())
	act := testActivation()
	tests := []struct {
		in   string
		want any
	}{
		{"${{ inputs.n }}", int64(3)},
		{"${{inputs.price}}", 2.5},
		{"${{ inputs.n > 1 }}", true},
		{"${{ inputs.tags }}", []any{"a", "b", "c"}},
		{"${{ inputs.cfg }}", map[string]any{"region": "eu", "replicas": int64(2)}},
		{"${{ steps.test.output }}", nil},
		{" ${{ inputs.n }}", " 3"},
		{"${{ inputs.n }}${{ inputs.n }}", "33"},
		{"just text", "just text"},
	}
	for _, tt := range tests {
		tpl, err := ParseTemplate(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tpl.RenderValue(env, act)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("RenderValue(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestTemplateCheckError(t *testing.T) {
	env := mustEnv(t, testScope())
	tpl, err := ParseTemplate("deploy ${{ steps.nope.output }}")
	if err != nil {
		t.Fatal(err)
	}
	err = tpl.Check(env)
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Offset != 7 || ce.Template == "" {
		t.Fatalf("Check error = %v, want a *CompileError at offset 7", err)
	}
	if _, err := tpl.Render(env, testActivation()); !errors.Is(err, ErrCompile) {
		t.Errorf("Render error = %v", err)
	}
}
