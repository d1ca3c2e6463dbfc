// Package good holds code the analyzer must accept: deterministic handlers, and code
// outside handlers that uses freely what a handler must not.
package good

import (
	crand "crypto/rand"
	"maps"
	"math/rand"
	"slices"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
)

// In is the fixtures' input.
type In struct {
	Names map[string]int
}

// Out is the fixtures' output.
type Out struct {
	Keys []string
}

// sorted is a handler that sorts the map's keys before using them.
func sorted(ctx *flow.Context, in In) (Out, error) {
	keys := slices.Sorted(maps.Keys(in.Names))
	for _, k := range keys {
		_ = in.Names[k]
	}
	start := ctx.Now()
	if err := ctx.Sleep("wait", time.Minute); err != nil {
		return Out{}, err
	}
	_ = ctx.Now().Sub(start)
	_ = rand.New(rand.NewSource(42)).Intn(10) // seeded: deterministic
	var d time.Duration = 3 * time.Second     // time's types and constants are fine
	_ = d
	return Out{Keys: keys}, nil
}

// withActivity hands an activity to a step by name: the activity runs outside the
// workflow, so it is not followed.
func withActivity(ctx *flow.Context, in In) (Out, error) {
	_, err := flow.Step[string](ctx, "fetch", fetch)
	return Out{}, err
}

func fetch() (string, error) {
	_ = time.Now()
	go func() {}()
	return "", nil
}

// suppressed has findings silenced by the directive.
func suppressed(ctx *flow.Context, in In) (Out, error) {
	for k := range in.Names { //flowvet:ignore the order does not matter for a sum
		_ = k
	}
	//flowvet:ignore logged only, never decided on
	_ = time.Now()
	//flowvet:ignore
	time.Sleep(0)
	return Out{}, nil
}

// notAHandler is ordinary code: its first parameter is not *flow.Context.
func notAHandler(c client.Client, fc *flowclient.Client, m map[string]int) {
	go func() {}()
	ch := make(chan int, 1)
	ch <- 1
	<-ch
	close(ch)
	for range ch {
	}
	select {
	case <-time.After(time.Second):
	default:
	}
	for k := range m {
		_ = k
	}
	_ = time.Now()
	time.Sleep(0)
	_ = rand.Intn(3)
	_, _ = crand.Read(nil)
	_, _ = c.ExecuteWorkflow("x")
	_ = fc.Start("x", nil)
	_, _ = client.Dial(client.Options{})
}

// valueCtx takes a flow.Context by value, which is not a handler's signature.
func valueCtx(ctx flow.Context) { go func() {}() }

// secondParam has *flow.Context in second place: not a handler either.
func secondParam(n int, ctx *flow.Context) { _ = time.Now() }

// notCalled is a same-package function that no handler calls.
func notCalled() { _ = time.Now() }

var _ = func(n int) { go func() {}() } // a literal that is not a handler
