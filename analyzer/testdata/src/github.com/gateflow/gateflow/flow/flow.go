// Package flow is a stub of github.com/gateflow/gateflow/flow for the analyzer's tests:
// only the types the analyzer looks at and what the fixtures call.
package flow

import "time"

// Context is the stub of the handler context.
type Context struct{}

// Now is the workflow clock.
func (c *Context) Now() time.Time { return time.Time{} }

// Sleep is a durable timer.
func (c *Context) Sleep(name string, d time.Duration) error { return nil }

// Flow is a defined flow.
type Flow[I, O any] struct{}

// Define defines a flow.
func Define[I, O any](name string, handler func(ctx *Context, in I) (O, error)) *Flow[I, O] {
	return &Flow[I, O]{}
}

// Parallel runs branch funcs.
func Parallel(ctx *Context, branches ...func(*Context) error) error {
	// The analyzer does not check the runtime package itself: no finding here.
	go func() {}()
	return nil
}

// ForEach runs an item func for each item.
func ForEach[T, O any](ctx *Context, items []T, f func(*Context, int, T) (O, error)) ([]O, error) {
	return nil, nil
}

// Step runs an activity outside the workflow.
func Step[T any](ctx *Context, name string, activity any, args ...any) (T, error) {
	var zero T
	return zero, nil
}
