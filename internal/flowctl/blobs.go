package flowctl

import (
	"context"
	"fmt"
	"os"
	"strconv"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/blob"
)

// blobEnv names the blob store when --blob-url does not.
const blobEnv = "GATEFLOW_BLOB_URL"

// withBlobs gives o the payload store of --blob-url, so offloaded payloads decode and big
// inputs are offloaded as the workers do. Without one it reads (only reads: nothing it
// sends is offloaded, since the workers may not share that directory) the in-memory dev
// server's directory when it exists.
func (a *app) withBlobs(ctx context.Context, o client.Options) (client.Options, error) {
	u, readOnly := a.blobURL, false
	if u == "" {
		readOnly = true
		if st, err := os.Stat(blob.DevTempDir()); err != nil || !st.IsDir() {
			return o, nil
		}
		var err error
		if u, err = blob.FileURL(blob.DevTempDir()); err != nil {
			return o, nil
		}
	}
	store, err := blob.Open(ctx, u)
	if err != nil {
		return o, usageErr("--blob-url: payload store: %v", err)
	}
	codec, err := blob.NewCodec(store, blob.CodecOptions{ReadOnly: readOnly})
	if err != nil {
		_ = store.Close()
		return o, usageErr("--blob-url: payload store: %v", err)
	}
	o.DataConverter = blob.DataConverter(o.DataConverter, codec)
	a.blobs = store
	a.payloads = payloadReader{codec: codec, store: u, guessed: readOnly}
	return o, nil
}

// payloadReader resolves the references to offloaded payloads found in raw history events
// (which the client's data converter never sees) through the blob store flowctl opened.
type payloadReader struct {
	codec *blob.Codec // nil: flowctl has no store
	store string      // its URL
	// guessed is set when the store is the dev server's, not named by --blob-url.
	guessed bool
}

// resolve is p itself, or the payload p refers to, read from the store. what names the
// payload in errors.
func (r payloadReader) resolve(p *commonpb.Payload, what string) (*commonpb.Payload, error) {
	if !blob.IsRef(p) {
		return p, nil
	}
	size := string(p.GetMetadata()[blob.MetaSize])
	if _, err := strconv.Atoi(size); err != nil {
		size = "?"
	}
	if r.codec == nil {
		return nil, fmt.Errorf("%s (%s bytes) is kept in the workers' blob store, which flowctl has not opened: name it with --blob-url or %s (the store of flow-worker's --blob-url)",
			what, size, blobEnv)
	}
	ps, err := r.codec.Decode([]*commonpb.Payload{p})
	if err != nil {
		hint := ""
		if r.guessed {
			hint = " (flowctl guessed the dev server's store: name the workers' with --blob-url or " + blobEnv + ")"
		}
		return nil, fmt.Errorf("read %s (%s bytes) from blob store %s%s: %w", what, size, r.store, hint, err)
	}
	return ps[0], nil
}
