package expr

// Checker checks expressions and templates for the flowdef validator, which calls it
// through an interface with these two methods. Its zero value is ready to use.
type Checker struct{}

// CheckExpr compiles expr in scope; the error is a *CompileError.
func (Checker) CheckExpr(expr string, scope Scope) error {
	env, err := NewEnv(scope)
	if err != nil {
		return err
	}
	_, err = env.Compile(expr)
	return err
}

// CheckTemplate parses s as a template and compiles its expressions in scope; the error
// is a *TemplateError or joins *CompileErrors.
func (Checker) CheckTemplate(s string, scope Scope) error {
	t, err := ParseTemplate(s)
	if err != nil {
		return err
	}
	if t.IsLiteral() {
		return nil
	}
	env, err := NewEnv(scope)
	if err != nil {
		return err
	}
	return t.Check(env)
}
