package activities

import "context"

// MaxStoredOutputBytes is the bound of stdout and of stderr that a worker whose payloads go
// to a blob store uses by default (flow-worker with a blob store): the whole output of all
// but runaway commands, kept in the store with a reference in the history.
const MaxStoredOutputBytes = 64 << 20

type outputLimitKey struct{}

// WithOutputLimit returns ctx telling RunShell to keep at most n bytes of stdout and of
// stderr; n <= 0 means MaxOutputBytes. Only a worker whose client offloads big payloads to
// a blob store should raise it above MaxOutputBytes: otherwise a big result goes into the
// history, up to Temporal's payload limit.
func WithOutputLimit(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, outputLimitKey{}, n)
}

// OutputLimit is the bound per stream RunShell applies under ctx: what WithOutputLimit set,
// else MaxOutputBytes.
func OutputLimit(ctx context.Context) int {
	if n, ok := ctx.Value(outputLimitKey{}).(int); ok && n > 0 {
		return n
	}
	return MaxOutputBytes
}
