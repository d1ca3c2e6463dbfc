package flowclient

import (
	"context"
	"fmt"
	"io"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/blob"
)

// PayloadStore configures WithPayloadStore.
type PayloadStore struct {
	// URL is the blob store: file:///dir, s3://bucket?region=..., gs://bucket or
	// azblob://container.
	URL string
	// Threshold is the serialized payload size in bytes above which payloads go to the
	// store. 0 means 128 KiB.
	Threshold int
	// ReadOnly only reads payloads others offloaded: nothing this client sends goes to
	// the store (flowctl when it guessed the dev server's store).
	ReadOnly bool
}

// WithPayloadStore returns o with a data converter that keeps payloads bigger than
// ps.Threshold (inputs, results, signals, step inputs and outputs) in the blob store at
// ps.URL and only a reference (key, size, SHA-256) in the workflow history; reading the
// payload fetches it back and checks its hash. Dial the Temporal client of both New and
// flow.NewWorker with it: every client and worker of the namespace that reads such
// payloads needs the same store. Close the returned store after the client.
//
// o.DataConverter, when set, stays underneath (the store sees what it produced).
func WithPayloadStore(ctx context.Context, o client.Options, ps PayloadStore) (client.Options, io.Closer, error) {
	if ps.URL == "" {
		return o, nil, fmt.Errorf("payload store: no URL")
	}
	store, err := blob.Open(ctx, ps.URL)
	if err != nil {
		return o, nil, fmt.Errorf("payload store: %w", err)
	}
	codec, err := blob.NewCodec(store, blob.CodecOptions{Threshold: ps.Threshold, ReadOnly: ps.ReadOnly})
	if err != nil {
		_ = store.Close()
		return o, nil, fmt.Errorf("payload store: %w", err)
	}
	o.DataConverter = blob.DataConverter(o.DataConverter, codec)
	return o, store, nil
}
