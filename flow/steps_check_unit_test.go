package flow

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
)

type countIn struct{ Repo string }

func countActivity(_ context.Context, in countIn) (int, error) { return len(in.Repo), nil }
func noContext(a string, b int) (string, error)                { return a, nil }
func onlyError(_ context.Context) error                        { return nil }
func variadic(_ context.Context, tags ...string) (int, error)  { return len(tags), nil }
func pointerArg(_ context.Context, in *countIn) (int, error)   { return 0, nil }
func threeResults() (int, string, error)                       { return 0, "", nil }

// TestStepChecksTheActivitySignature: a custom step whose arguments or result do not fit
// its activity function fails before dispatch with a message naming both sides.
func TestStepChecksTheActivitySignature(t *testing.T) {
	tests := []struct {
		name     string
		activity any
		args     []any
		result   reflect.Type
		wantErr  string
	}{
		{"fits", countActivity, []any{countIn{Repo: "x"}}, reflect.TypeFor[int](), ""},
		{"no context parameter", noContext, []any{"a", 1}, reflect.TypeFor[string](), ""},
		{"by name is checked by the worker", "CountActivity", []any{1, 2, 3}, reflect.TypeFor[string](), ""},
		{"only an error", onlyError, nil, reflect.TypeFor[struct{}](), ""},
		{"variadic", variadic, []any{"a", "b"}, reflect.TypeFor[int](), ""},
		{"variadic with none", variadic, nil, reflect.TypeFor[int](), ""},
		{"nil for a pointer", pointerArg, []any{nil}, reflect.TypeFor[int](), ""},
		{"any result", countActivity, []any{countIn{}}, reflect.TypeFor[any](), ""},
		{"raw result", countActivity, []any{countIn{}}, reflect.TypeFor[json.RawMessage](), ""},
		{"too few arguments", countActivity, nil, reflect.TypeFor[int](), "activity countActivity takes 1 arguments (flow.countIn), the step gives 0"},
		{"too many arguments", noContext, []any{"a", 1, 2}, reflect.TypeFor[string](), "activity noContext takes 2 arguments (string, int), the step gives 3"},
		{"wrong argument type", countActivity, []any{"x"}, reflect.TypeFor[int](), "activity countActivity: argument 1 is string, the activity takes flow.countIn"},
		{"wrong variadic type", variadic, []any{"a", 2}, reflect.TypeFor[int](), "activity variadic: argument 2 is int, the activity takes string"},
		{"nil for a struct", countActivity, []any{nil}, reflect.TypeFor[int](), "activity countActivity: argument 1 is nil, the activity takes flow.countIn"},
		{"wrong result", countActivity, []any{countIn{}}, reflect.TypeFor[string](), "activity countActivity returns int, the step reads string"},
		{"not (R, error)", threeResults, nil, reflect.TypeFor[int](), "activity threeResults returns (int, string, error): an activity returns (R, error) or error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkArgs(tt.activity, tt.args)
			if err == nil {
				err = checkResult(tt.activity, tt.result)
			}
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tt.wantErr)
		})
	}
}

var mismatchedStep = Define("unit/mismatched", func(ctx *Context, _ none) (string, error) {
	return Step[string](ctx, "count", countActivity, "not a countIn")
})

func TestStepWithMismatchedArgumentsIsNotDispatched(t *testing.T) {
	env := newUnitEnv(t, runConfig{}, mismatchedStep)
	env.RegisterActivity(countActivity)
	env.ExecuteWorkflow(mismatchedStep.Name(), none{})
	assert.ErrorContains(t, env.GetWorkflowError(), "step count: activity countActivity: argument 1 is string, the activity takes flow.countIn")
	st := queryState(t, env)
	assert.Equal(t, runs.StepFailed, stepByName(t, st, "count").Status)
	env.AssertNotCalled(t, "countActivity")
}
