package expr_test

import (
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/flowdef/expr"
)

// A flow's condition and a `with:` value, compiled once for the node's scope and evaluated
// over what the run recorded.
func Example() {
	env, err := expr.NewEnv(expr.Scope{Inputs: []string{"env", "replicas"}, Steps: []string{"build"}})
	if err != nil {
		panic(err)
	}
	act := expr.Activation{
		Inputs: map[string]any{"env": "prod", "replicas": float64(3)},
		Steps:  map[string]expr.StepResult{"build": {Output: map[string]any{"image": "app:7"}, Status: "succeeded"}},
	}

	cond, err := env.CompileBool(`inputs.env == "prod" && steps.build.status == "succeeded"`)
	if err != nil {
		panic(err)
	}
	ok, _ := cond.EvalBool(act)
	fmt.Println("deploy:", ok)

	msg, _ := expr.ParseTemplate("rolling out ${{ steps.build.output.image }} x${{ inputs.replicas }}")
	s, _ := msg.Render(env, act)
	fmt.Println(s)

	count, _ := expr.ParseTemplate("${{ inputs.replicas * 2 }}")
	v, _ := count.RenderValue(env, act)
	fmt.Printf("%T %v\n", v, v)

	_, err = env.Compile("steps.test.output")
	fmt.Println(errors.Is(err, expr.ErrCompile), err)
	// Output:
	// deploy: true
	// rolling out app:7 x3
	// int64 6
	// true expr: invalid expression "steps.test.output": 1:6: step "test" is not visible here (visible steps: build)
}
