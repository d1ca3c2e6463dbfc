package flowctl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/activities"
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

// readStored reads a shell step's stream the worker kept in the blob store and checks its
// size and SHA-256. what names it in errors.
func (r payloadReader) readStored(ctx context.Context, so activities.StoredOutput, what string) (string, error) {
	if r.codec == nil {
		return "", fmt.Errorf("%s (%d bytes) is kept in the workers' blob store, which flowctl has not opened: name it with --blob-url or %s (the store of flow-worker's --blob-url)",
			what, so.Size, blobEnv)
	}
	hint := ""
	if r.guessed {
		hint = " (flowctl guessed the dev server's store: name the workers' with --blob-url or " + blobEnv + ")"
	}
	rd, err := r.codec.Store().NewReader(ctx, so.Key)
	if err != nil {
		return "", fmt.Errorf("read %s (%d bytes) from blob store %s%s: %w", what, so.Size, r.store, hint, err)
	}
	defer rd.Close()
	var b strings.Builder
	b.Grow(int(min(so.Size, 1<<30)))
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(&b, h), rd); err != nil {
		return "", fmt.Errorf("read %s from blob store %s: %w", what, r.store, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); int64(b.Len()) != so.Size || got != so.SHA256 {
		return "", fmt.Errorf("%s in blob store %s (%s) has %d bytes and SHA-256 %s, the step's result says %d bytes and %s (changed or corrupt)",
			what, r.store, so.Key, b.Len(), got, so.Size, so.SHA256)
	}
	return b.String(), nil
}
