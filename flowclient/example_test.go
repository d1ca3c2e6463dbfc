package flowclient_test

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
)

// A client starts a run of a flow its workers serve and waits for it to end. (Compiled,
// not run: it needs a Temporal server and a worker.)
func ExampleNew() {
	tc, err := client.Dial(client.Options{HostPort: "localhost:7233"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tc.Close()
	c := flowclient.New(tc, flowclient.Options{TaskQueue: "gateflow"})
	ctx := context.Background()
	run, err := c.Start(ctx, "hello", map[string]string{"name": "ada"}, core.StartOptions{IdempotencyKey: "hello-ada"})
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := c.Wait(ctx, run.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Status, string(d.Result))
}
