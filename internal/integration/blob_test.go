package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/logging"
)

// bigEcho is a custom step returning its 1 MiB input reversed in case, so the result is
// another 1 MiB payload.
func bigEcho(text string) (string, error) {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, text), nil
}

// bigPayloads passes a 1 MiB input to a step and returns the step's 1 MiB output.
var bigPayloads = flow.Define("test.blob.big", func(ctx *flow.Context, in string) (string, error) {
	return flow.Step[string](ctx.With(flow.StepTimeout(time.Minute)), "echo", bigEcho, in)
})

func TestBigPayloadsGoToTheBlobStoreAndTheHistoryStaysSmall(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t, 2*time.Minute)
	dir := filepath.Join(t.TempDir(), "blobs")
	u, err := blob.FileURL(dir)
	require.NoError(t, err)
	o, store, err := flowclient.WithPayloadStore(ctx, client.Options{
		HostPort: shared.srv.FrontendAddress(), Namespace: shared.srv.Namespace(),
		Logger: logging.NewSDKLogger(os.Stderr, "error"),
	}, flowclient.PayloadStore{URL: u})
	require.NoError(t, err)
	defer store.Close()
	tc, err := client.DialContext(ctx, o)
	require.NoError(t, err)
	defer tc.Close()

	queue := fmt.Sprintf("blob-%d", time.Now().UnixNano())
	w := flow.NewWorker(tc, flow.WorkerOptions{TaskQueue: queue, StopTimeout: time.Second}, bigPayloads)
	w.RegisterActivity(bigEcho, "")
	require.NoError(t, w.Start())
	defer w.Stop()
	c := flowclient.New(tc, flowclient.Options{TaskQueue: queue, Identity: "tester"})

	in := strings.Repeat("Gateflow moves big payloads out of the history. ", (1<<20)/48+1)[:1<<20]
	run, err := c.Start(ctx, "test.blob.big", in, core.StartOptions{})
	require.NoError(t, err)
	d, err := c.Wait(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	var out string
	require.NoError(t, json.Unmarshal(d.Result, &out))
	want, _ := bigEcho(in)
	require.Len(t, out, 1<<20)
	assert.True(t, out == want, "the result decoded through flowclient.Client differs from the step's output")

	// The recorded history holds references only: no event carries a big payload.
	hist := tc.GetWorkflowHistory(ctx, run.ID, "", false, 0)
	refs, total, biggest := 0, 0, 0
	for hist.HasNext() {
		ev, err := hist.Next()
		require.NoError(t, err)
		n := proto.Size(ev)
		total += n
		biggest = max(biggest, n)
		raw, err := proto.Marshal(ev)
		require.NoError(t, err)
		refs += bytes.Count(raw, []byte(blob.EncodingRef))
	}
	t.Logf("history: %d bytes in all, biggest event %d bytes, %d references", total, biggest, refs)
	assert.Less(t, biggest, 32<<10, "an event of the history carries a big payload")
	assert.Less(t, total, 256<<10, "the history is not small")
	// The run's input, the step's input and output, and the run's result.
	assert.GreaterOrEqual(t, refs, 4)
	entries, err := os.ReadDir(filepath.Join(dir, "payloads"))
	require.NoError(t, err)
	assert.Len(t, entries, 2, "the input and the output (stored once each by their hash)")

}

func TestDevServerUIGetsTheCodecEndpoint(t *testing.T) {
	t.Parallel()
	store, err := blob.Open(context.Background(), mustFileURL(t, filepath.Join(t.TempDir(), "blobs")))
	require.NoError(t, err)
	defer store.Close()
	codec, err := blob.NewCodec(store, blob.CodecOptions{Threshold: 64})
	require.NoError(t, err)
	uiPort, err := devserver.FreePort()
	require.NoError(t, err)
	srv, err := devserver.Start(devserver.Options{UIPort: uiPort, Codec: codec})
	require.NoError(t, err)
	defer srv.Stop()
	require.NotEmpty(t, srv.CodecURL())

	resp, err := http.Get(srv.UIURL() + "/api/v1/settings")
	require.NoError(t, err)
	var settings struct {
		Codec struct{ Endpoint string }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&settings))
	resp.Body.Close()
	assert.Equal(t, srv.CodecURL(), settings.Codec.Endpoint)

	// The UI's browser calls /decode across origins: the preflight and the call work.
	enc, err := codec.Encode([]*commonpb.Payload{mustPayload(t, strings.Repeat("ui", 100))})
	require.NoError(t, err)
	require.True(t, blob.IsRef(enc[0]))
	pre, _ := http.NewRequest(http.MethodOptions, settings.Codec.Endpoint+"/decode", nil)
	pre.Header.Set("Origin", srv.UIURL())
	pre.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
	resp, err = http.DefaultClient.Do(pre)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, srv.UIURL(), resp.Header.Get("Access-Control-Allow-Origin"))
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	require.NoError(t, err)
	req, _ := http.NewRequest(http.MethodPost, settings.Codec.Endpoint+"/decode", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	req.Header.Set("Origin", srv.UIURL())
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Payloads []json.RawMessage `json:"payloads"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out.Payloads, 1)
	var p commonpb.Payload
	require.NoError(t, protojson.Unmarshal(out.Payloads[0], &p))
	var s string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(&p, &s))
	assert.Equal(t, strings.Repeat("ui", 100), s)
}

func mustFileURL(t *testing.T, dir string) string {
	t.Helper()
	u, err := blob.FileURL(dir)
	require.NoError(t, err)
	return u
}

func mustPayload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}
