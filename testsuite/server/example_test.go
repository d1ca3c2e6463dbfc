package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/testsuite/server"
)

// An integration test: a real embedded Temporal server and a worker, a real run.
func ExampleStart() {
	t := &testing.T{}
	srv := server.Start(t, server.Options{}, examples.Hello)
	defer srv.Stop()
	ctx := context.Background()
	run, err := srv.Client.Start(ctx, "hello", examples.HelloInput{Name: "server"}, core.StartOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := srv.Client.Wait(ctx, run.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Status, len(d.State.Steps))
	// Output: completed 2
}
