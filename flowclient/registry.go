package flowclient

import (
	"context"

	"github.com/gateflow/gateflow/flowdef"
)

// Registry is what the workers of the client's task queue validate definitions against,
// read from its catalog (see flow.Worker.Registry): their actions, item providers and gate
// types besides the built-in ones, and the flows they serve. Definitions the workers
// serve (kind yaml) count as flows a `call:` may name like Go flows: their content is not
// in the catalog, so such a call is not followed. Workers that published no registry
// (older ones) leave only the built-ins and the flows. core.ErrNoCatalog means no worker ever
// published on the queue.
func (c *Client) Registry(ctx context.Context) (*flowdef.StaticRegistry, error) {
	cat, err := c.Workflows(ctx)
	if err != nil {
		return nil, err
	}
	return flowdef.NewStaticRegistry(cat.Registry()), nil
}
