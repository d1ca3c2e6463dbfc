package core_test

import (
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/core"
)

// A client branches on the typed errors of a refused start: an unknown flow name, or
// input that does not fit the flow's schema. Nothing was started in either case.
func ExampleUnknownWorkflowError() {
	var err error = &core.UnknownWorkflowError{Name: "relase", TaskQueue: "gateflow", Known: []string{"hello", "release"}}
	var unknown *core.UnknownWorkflowError
	if errors.As(err, &unknown) {
		fmt.Println(unknown)
	}
	// Output:
	// unknown workflow "relase" on task queue gateflow (known: hello, release)
}

// The catalog a task queue's workers publish names the flows they serve and the plain
// registry (actions, services, …) that definitions are checked against.
func ExampleCatalog_Lookup() {
	cat := &core.Catalog{
		TaskQueue: "gateflow",
		Workflows: []core.WorkflowInfo{{Name: "hello"}, {Name: "release"}},
		Workers:   &core.RegistryInfo{Actions: []string{"notify"}, Services: []string{}},
	}
	w, ok := cat.Lookup("release")
	fmt.Println(w.Name, ok, cat.Names())
	_, ok = cat.Lookup("relase")
	fmt.Println(ok, cat.Registry().Actions)
	// Output:
	// release true [hello release]
	// false [notify]
}
