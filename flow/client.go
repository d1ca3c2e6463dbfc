package flow

import (
	"github.com/gateflow/gateflow/internal/connect"
	"go.temporal.io/sdk/client"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// TaskQueue is where runs are started and whose catalog is read. Default
	// DefaultTaskQueue.
	TaskQueue string
	// Identity is recorded as the creator of runs started without StartOptions.CreatedBy.
	// Default: FLOW_USER, else the OS user.
	Identity string
}

// Client starts and inspects gateflow runs. It wraps a Temporal client.
type Client struct {
	tc   client.Client
	opts ClientOptions
}

// NewClient wraps a Temporal client.
func NewClient(c client.Client, opts ClientOptions) *Client {
	if opts.TaskQueue == "" {
		opts.TaskQueue = DefaultTaskQueue
	}
	if opts.Identity == "" {
		opts.Identity = connect.CurrentUser()
	}
	return &Client{tc: c, opts: opts}
}

// Temporal returns the wrapped Temporal client.
func (c *Client) Temporal() client.Client { return c.tc }

// TaskQueue is the client's task queue.
func (c *Client) TaskQueue() string { return c.opts.TaskQueue }

// who is by, or the client's identity when by is empty.
func (c *Client) who(by string) string {
	if by == "" {
		return c.opts.Identity
	}
	return by
}
