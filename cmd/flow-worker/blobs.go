package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/converter"

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
