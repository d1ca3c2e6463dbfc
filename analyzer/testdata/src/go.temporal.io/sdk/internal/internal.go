// Package internal is a stub of go.temporal.io/sdk/internal: the types behind the
// aliases of the client package.
package internal

// WorkflowRun is a started workflow.
type WorkflowRun interface {
	GetID() string
	Get() error
}
