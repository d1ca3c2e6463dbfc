package bad

import (
	. "time"

	"github.com/gateflow/gateflow/flow"
)

// dotImport uses the clock through a dot import.
func dotImport(ctx *flow.Context, in In) (Out, error) {
	_ = Now() // want `^time\.Now in flow handler dotImport: use ctx\.Now\(\) instead$`
	return Out{}, nil
}

// typeParams ranges over a map and a channel known only by their constraints.
func typeParams[M ~map[string]int, C ~chan int | ~<-chan int](ctx *flow.Context, m M, c C) (Out, error) {
	for k := range m { // want `^range over map in flow handler typeParams:`
		_ = k
	}
	for v := range c { // want `^range over channel in flow handler typeParams:`
		_ = v
	}
	return Out{}, nil
}

// sharedA and sharedB both call sharedHelper: its finding is reported once, for the
// first handler that reaches it.
func sharedA(ctx *flow.Context, in In) (Out, error) {
	sharedHelper()
	return Out{}, nil
}

func sharedB(ctx *flow.Context, in In) (Out, error) {
	sharedHelper()
	return Out{}, nil
}

func sharedHelper() {
	Sleep(Second) // want `^time\.Sleep in flow handler sharedA \(via sharedHelper\):`
}
