package flow

import (
	"context"
	"fmt"

	"github.com/gateflow/gateflow/activities"
)

// shellActivity is the shell step activity keeping at most limit bytes of stdout and of
// stderr (WorkerOptions.ShellOutputBytes; 0: activities.MaxOutputBytes). More than
// activities.MaxOutputBytes, which a result carries at most, needs a blob store (store) to
// keep the rest in.
func shellActivity(limit int, store bool) (func(context.Context, activities.Shell) (activities.ShellResult, error), error) {
	switch {
	case limit < 0:
		return nil, fmt.Errorf("ShellOutputBytes %d is negative (0 means %d bytes per stream)", limit, activities.MaxOutputBytes)
	case limit > activities.MaxOutputBytes && !store:
		return nil, fmt.Errorf("ShellOutputBytes %d: a shell step's result carries at most %d bytes per stream; more is kept in the blob store, and the worker has none (set BlobURL)", limit, activities.MaxOutputBytes)
	case limit == 0:
		return activities.RunShell, nil
	}
	return func(ctx context.Context, in activities.Shell) (activities.ShellResult, error) {
		return activities.RunShell(activities.WithOutputLimit(ctx, limit), in)
	}, nil
}
