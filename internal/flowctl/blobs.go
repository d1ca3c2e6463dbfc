package flowctl

import (
	"context"
	"os"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/flow"
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
	o, closer, err := flow.WithPayloadStore(ctx, o, flow.PayloadStore{URL: u, ReadOnly: readOnly})
	if err != nil {
		return o, usageErr("--blob-url: %v", err)
	}
	a.blobs = closer
	return o, nil
}
