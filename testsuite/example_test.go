package testsuite_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/testsuite"
)

// A unit test of a flow: steps mocked by name, the result asserted.
func ExampleNewEnv() {
	env := testsuite.NewEnv(&testing.T{})
	env.Register(examples.Hello)
	env.MockStep("greet", activities.ShellResult{Stdout: "Hello, mock!"}, nil)
	env.MockStep("shout", activities.ShellResult{Stdout: "HELLO, MOCK!"}, nil)
	r := env.Run("hello", examples.HelloInput{Name: "mock"})
	var out examples.HelloOutput
	_ = r.Decode(&out)
	fmt.Println(r.Status(), r.StepNames(), out.Shouted)
	// Output: completed [greet shout] HELLO, MOCK!
}

// The typed form: the output comes back as the flow's output type.
func ExampleRun() {
	env := testsuite.NewEnv(&testing.T{})
	env.MockStep("greet", activities.ShellResult{Stdout: "Hello, typed!"}, nil)
	env.MockStep("shout", activities.ShellResult{Stdout: "HELLO, TYPED!"}, nil)
	out, r := testsuite.Run(env, examples.Hello, examples.HelloInput{Name: "typed"})
	fmt.Println(r.Status(), out.Shouted)
	// Output: completed HELLO, TYPED!
}

// People act at moments of virtual time: two approvals an hour apart.
func ExampleEnv_Approve() {
	gated := flow.Define("gated", func(ctx *flow.Context, _ struct{}) (string, error) {
		d, err := ctx.Approval("go", approvalRequest())
		return string(d.Outcome), err
	})
	env := testsuite.NewEnv(&testing.T{})
	env.Register(gated)
	env.Approve(time.Hour, "go", "alice")
	env.Approve(2*time.Hour, "go", "bob")
	r := env.Run("gated", nil)
	fmt.Println(r.Status(), len(r.Votes("go")))
	// Output: completed 2
}

// Replaying a recorded history against the current code.
func ExampleReplay() {
	err := testsuite.Replay("../examples/testdata/histories/hello.json", flow.WorkerOptions{}, examples.Hello)
	fmt.Println(err)
	// Output: <nil>
}
