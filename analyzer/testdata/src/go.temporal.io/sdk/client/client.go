// Package client is a stub of go.temporal.io/sdk/client for the analyzer's tests.
package client

import "go.temporal.io/sdk/internal"

// WorkflowRun is an alias, as in the real package.
type WorkflowRun = internal.WorkflowRun

// Client is the Temporal client.
type Client interface {
	ExecuteWorkflow(name string) (WorkflowRun, error)
	Close()
}

// Options configure a client.
type Options struct{}

// Dial connects a client.
func Dial(Options) (Client, error) { return nil, nil }

// NewLazyClient makes a client that connects on first use.
func NewLazyClient(Options) (Client, error) { return nil, nil }
