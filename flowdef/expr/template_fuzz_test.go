package expr

import (
	"strings"
	"testing"
)

// FuzzTemplate: templates (`with:` values, messages, commands) and their `${{ }}`
// expressions come from definition files. ParseTemplate, Check and Render never panic;
// a parsed template prints back as written and has no empty expression; a literal
// template renders to its text with `$${{` unescaped; errors are non-empty.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"plain", "Hello ${{ inputs.name }}!", "$${{ literal }}", "${{ }}", "${{ unterminated", `${{ {"a": 1}["a"] }}`,
		`${{ "}}" + inputs.name }}`, "${{ inputs.n * 2 }}", "${{ size(inputs.list) > 0 ? 'y' : 'n' }}", "${{ 1/0 }}", "${{ steps.a.output }}",
		"${{ [1,2,3].map(x, x * x) }}", "${{ '''tri}}ple''' }}", "${{ inputs.name.matches('(a+)+$') }}"} {
		f.Add(s)
	}
	env, err := NewEnv(Scope{})
	if err != nil {
		f.Fatal(err)
	}
	act := Activation{Inputs: map[string]any{"name": "Ada", "n": int64(3), "list": []any{"a"}}, Vars: map[string]any{}}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 2000 {
			return
		}
		tpl, err := ParseTemplate(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseTemplate(%q): empty error", s)
			}
			return
		}
		if tpl.String() != s {
			t.Fatalf("ParseTemplate(%q).String() = %q", s, tpl.String())
		}
		for _, e := range tpl.Exprs() {
			if strings.TrimSpace(e) == "" {
				t.Fatalf("ParseTemplate(%q) kept an empty expression", s)
			}
		}
		if tpl.IsLiteral() {
			got, err := tpl.Render(env, act)
			if err != nil || got != strings.ReplaceAll(s, "$${{", "${{") {
				t.Fatalf("literal %q rendered as %q, %v", s, got, err)
			}
			return
		}
		if err := tpl.Check(env); err != nil {
			if err.Error() == "" {
				t.Fatalf("Check(%q): empty error", s)
			}
			return
		}
		if _, err := tpl.Render(env, act); err != nil && err.Error() == "" {
			t.Fatalf("Render(%q): empty error", s)
		}
	})
}
