package mcptools

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors a *ServerError may wrap, for errors.Is.
var (
	// ErrUnknownServer: the pool has no server of that name.
	ErrUnknownServer = errors.New("unknown mcp server")
	// ErrTooLarge: a message from the server was over Options.MaxMessageBytes. The
	// connection is dropped (the next call reconnects) and the call is not retryable.
	ErrTooLarge = errors.New("message over the size limit")
	// ErrClosed: the pool was closed.
	ErrClosed = errors.New("mcp pool closed")
)

// ServerError is a failure to talk to an MCP server: it could not be started or reached,
// the connection broke, the server answered with a protocol error, or a message was over
// the limit. A tool that ran and failed is not a ServerError: it is a Result with IsError.
type ServerError struct {
	Server string // the server's declared name
	Op     string // what was being done: "connect", "list tools", "call tool x", …
	// Retryable says whether trying again may succeed: true for transport failures (the
	// process died, the endpoint was unreachable, a timeout), false for protocol errors
	// (an unknown tool, invalid parameters), over-limit messages and unknown servers.
	Retryable bool
	// Code is the JSON-RPC error code of a protocol error, 0 otherwise.
	Code int64
	Err  error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("mcp server %q: %s: %v", e.Server, e.Op, e.Err)
}

func (e *ServerError) Unwrap() error { return e.Err }

// IsRetryable reports whether err is a *ServerError that says trying again may succeed.
func IsRetryable(err error) bool {
	var se *ServerError
	return errors.As(err, &se) && se.Retryable
}

// classify turns an error of the SDK into a *ServerError. tooLarge says the transport
// refused an over-limit message during the operation.
func classify(server, op string, err error, tooLarge bool) *ServerError {
	se := &ServerError{Server: server, Op: op, Err: err}
	var wire *jsonrpc.Error
	isWire := errors.As(err, &wire)
	switch {
	case tooLarge:
		se.Err = fmt.Errorf("%w: %v", ErrTooLarge, err)
	case errors.Is(err, ErrClosed), errors.Is(err, context.Canceled):
	case errors.Is(err, mcp.ErrConnectionClosed), isWire && transportCodes[wire.Code]:
		se.Retryable = true
	case isWire:
		se.Code = wire.Code
	default:
		se.Retryable = true
	}
	return se
}

// transportCodes are the JSON-RPC error codes the SDK uses for a connection that closed
// or a transport that refused a message (client closing, server closing, rejected by
// transport): failures of the connection, not answers of the server.
var transportCodes = map[int64]bool{-32003: true, -32004: true, -32005: true}
