package activities

import "context"

// MaxStoredOutputBytes is the bound of stdout and of stderr that a worker with a blob store
// uses by default (flow-worker with a blob store): the whole output of all but runaway
// commands, streamed to the store (the result keeps MaxOutputBytes of it and a reference).
const MaxStoredOutputBytes = 1 << 30

type outputLimitKey struct{}

// WithOutputLimit returns ctx telling RunShell to keep at most n bytes of stdout and of
// stderr; n <= 0 means MaxOutputBytes. The result carries at most MaxOutputBytes of each
// whatever n; a limit above it matters with an output store (WithOutputStore), which then
// keeps each stream up to n bytes.
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
