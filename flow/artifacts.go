package flow

import (
	"github.com/gateflow/gateflow/artifacts"

	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/runs"
	"go.temporal.io/sdk/temporal"
)

// Artifacts between steps (activities.Shell Outputs and Inputs): the shell activity keeps
// them in the worker's blob store; the run resolves a step's inputs from its own step
// records before it dispatches the step.

// resolveInputs fills in the blob key of each of a shell step's inputs from the run's
// step records: the closest earlier producer of the same run attempt wins. A missing one
// is an ErrorArtifactNotFound error, and the step is not dispatched. A plan resolves
// nothing (its steps produced nothing).
func (c *Context) resolveInputs(s activities.Shell) (activities.Shell, error) {
	if len(s.Inputs) == 0 || c.run.setup.plan {
		return s, nil
	}
	st := c.run.state
	inputs := make([]activities.ArtifactInput, len(s.Inputs))
	for i, in := range s.Inputs {
		inputs[i] = in
		if in.Key != "" {
			continue // given by the caller
		}
		art, err := lookupArtifact(st.Steps, max(st.Attempt, 1), in.Step, in.Name)
		if err != nil {
			return s, err
		}
		inputs[i].Key = art.Key
	}
	s.Inputs = inputs
	return s, nil
}

// lookupArtifact finds artifact name of step in steps (a run's records, oldest first): the
// last record of runAttempt whose name or activity ID is step and that holds the artifact.
func lookupArtifact(steps []runs.Step, runAttempt int, step, name string) (artifacts.Artifact, error) {
	var closest *runs.Step
	for i := len(steps) - 1; i >= 0; i-- {
		r := &steps[i]
		if r.RunAttempt != runAttempt || (r.Name != step && r.ActivityID != step) {
			continue
		}
		if closest == nil {
			closest = r
		}
		for _, a := range r.Artifacts {
			if a.Name == name {
				return a, nil
			}
		}
	}
	why := fmt.Sprintf("no earlier step %q in run attempt %d", step, runAttempt)
	if closest != nil {
		made := "nothing"
		if len(closest.Artifacts) > 0 {
			names := make([]string, len(closest.Artifacts))
			for i, a := range closest.Artifacts {
				names[i] = a.Name
			}
			made = strings.Join(names, ", ")
		}
		why = fmt.Sprintf("no earlier step %q produced it (the closest, %s, is %s and produced %s)", step, closest.ActivityID, closest.Status, made)
	}
	return artifacts.Artifact{}, newTypedError(fmt.Sprintf("artifact %q of step %q not found: %s", name, step, why), ErrorArtifactNotFound, nil)
}

// stepFailureMessage is what a step refused before dispatch records as its error: an
// application error's message without the type suffix.
func stepFailureMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && error(app) == err {
		return app.Message()
	}
	return err.Error()
}

// withArtifacts gives the shell activity shell the worker's blob store for artifacts and
// for outputs longer than a result keeps (activities.WithOutputStore).
func withArtifacts(opts WorkerOptions, shell func(context.Context, activities.Shell) (activities.ShellResult, error)) func(context.Context, activities.Shell) (activities.ShellResult, error) {
	var store activities.ArtifactStore
	switch {
	case opts.blobs != nil:
		store = opts.blobs
	case opts.BlobURL != "":
		store = &lazyStore{url: opts.BlobURL}
	default:
		return shell
	}
	outputs, _ := store.(activities.OutputStore)
	return func(ctx context.Context, in activities.Shell) (activities.ShellResult, error) {
		if in.HasArtifacts() {
			ctx = activities.WithArtifactStore(ctx, store)
		}
		return shell(activities.WithOutputStore(ctx, outputs), in)
	}
}

// lazyStore opens its blob store on first use (activities registered without Start).
type lazyStore struct {
	url   string
	once  sync.Once
	store *blob.Store
	err   error
}

func (l *lazyStore) open(ctx context.Context) (*blob.Store, error) {
	l.once.Do(func() { l.store, l.err = blob.Open(ctx, l.url) })
	return l.store, l.err
}

// Put implements activities.ArtifactStore.
func (l *lazyStore) Put(ctx context.Context, key string, data []byte) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	return s.Put(ctx, key, data)
}

// NewWriter implements activities.OutputStore.
func (l *lazyStore) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.NewWriter(ctx, key)
}

// Get implements activities.ArtifactStore.
func (l *lazyStore) Get(ctx context.Context, key string) ([]byte, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, key)
}
