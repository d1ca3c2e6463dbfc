// Package flowclient is a stub of github.com/gateflow/gateflow/flowclient for the
// analyzer's tests.
package flowclient

// Client is the stub of the flow client.
type Client struct{}

// Start starts a run.
func (c *Client) Start(name string, input any) error { return nil }
