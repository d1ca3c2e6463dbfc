package examples

import (
	"strings"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// HelloInput is the input of the hello flow.
type HelloInput struct {
	// Name is who to greet; default "world".
	Name string `json:"name,omitempty"`
}

// HelloOutput is what the hello flow returns.
type HelloOutput struct {
	Greeting string `json:"greeting"`
	Shouted  string `json:"shouted"`
}

// Hello greets someone with two shell steps: "greet" prints a greeting, "shout" turns the
// first step's output into capitals.
var Hello = flow.Define("hello", hello,
	flow.Description("Say hello with two shell steps"),
	flow.Category("examples"),
	flow.Version("1"))

func hello(ctx *flow.Context, in HelloInput) (HelloOutput, error) {
	name := in.Name
	if name == "" {
		name = "world"
	}
	greet, err := ctx.Shell("greet", activities.Shell{
		Command: `printf 'Hello, %s!' "$NAME"`,
		Env:     map[string]string{"NAME": name},
	})
	if err != nil {
		return HelloOutput{}, err
	}
	shout, err := ctx.Shell("shout", activities.Shell{
		Command: `printf '%s' "$GREETING" | tr '[:lower:]' '[:upper:]'`,
		Env:     map[string]string{"GREETING": greet.Stdout},
	})
	if err != nil {
		return HelloOutput{}, err
	}
	return HelloOutput{Greeting: greet.Stdout, Shouted: strings.TrimSpace(shout.Stdout)}, nil
}
