package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/blob"
)

// blobEnv names the blob store when --blob-url does not.
const blobEnv = "GATEFLOW_BLOB_URL"

// openBlobs opens the payload store of --blob-url (GATEFLOW_BLOB_URL; with --dev, by
// default a directory next to --db-file, or under the temporary directory for an
// in-memory server). Nil and no error: payloads stay in the history.
func openBlobs(cfg config) (*blob.Store, *blob.Codec, error) {
	u := cfg.blobURL
	if u == "" {
		u = os.Getenv(blobEnv)
	}
	if u == "" && cfg.dev {
		var err error
		if u, err = blob.DevURL(cfg.dbFile); err != nil {
			return nil, nil, fmt.Errorf("--blob-url: %w", err)
		}
	}
	if u == "" {
		return nil, nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	store, err := blob.Open(ctx, u)
	if err != nil {
		return nil, nil, fmt.Errorf("--blob-url: %w", err)
	}
	codec, err := blob.NewCodec(store, blob.CodecOptions{Threshold: cfg.blobThreshold})
	if err != nil {
		_ = store.Close()
		return nil, nil, fmt.Errorf("--blob-threshold: %w", err)
	}
	return store, codec, nil
}

// codecOrNil keeps a nil *blob.Codec a nil interface.
func codecOrNil(c *blob.Codec) converter.PayloadCodec {
	if c == nil {
		return nil
	}
	return c
}

// shellOutputLimit is how much of stdout and of stderr a shell step keeps
// (flow.WorkerOptions.ShellOutputBytes): --max-shell-output, else with a blob store
// activities.MaxStoredOutputBytes, else activities.MaxOutputBytes. A step's result carries
// at most activities.MaxOutputBytes of each stream; the store keeps longer ones whole up to
// this bound, so without a store more than that is refused.
func shellOutputLimit(flagValue int, store bool) (int, error) {
	switch {
	case flagValue < 0:
		return 0, fmt.Errorf("--max-shell-output %d: want a positive number of bytes (0: the default)", flagValue)
	case flagValue == 0 && store:
		return activities.MaxStoredOutputBytes, nil
	case flagValue > activities.MaxOutputBytes && !store:
		return 0, fmt.Errorf("--max-shell-output %d: without a blob store (--blob-url, %s) a shell step keeps only what its result carries, at most %d bytes per stream", flagValue, blobEnv, activities.MaxOutputBytes)
	}
	return flagValue, nil
}
