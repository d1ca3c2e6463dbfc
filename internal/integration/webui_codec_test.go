package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/runs"
)

// TestWebUIDecodesBigPayloadsThroughTheCodecEndpoint runs `flow-worker --dev` with a small
// --blob-threshold, so a hello run's result goes to the blob store and the history keeps a
// reference (the worker's memos, such as the catalog, stay readable in the history), then
// opens the run in the Temporal Web UI in headless Chromium: the browser calls the dev
// server's codec endpoint and the page shows the decoded result (a marker text), not the
// reference. The screenshot is kept in test-artifacts/.
func TestWebUIDecodesBigPayloadsThroughTheCodecEndpoint(t *testing.T) {
	browser := startBrowser(t)
	workerBin, ctlBin := binaries(t)
	blobs := filepath.Join(t.TempDir(), "blobs")
	address, ui := startDevWorker(t, workerBin, "--blob-url", mustFileURL(t, blobs), "--blob-threshold", "200")

	// The input stays under the threshold (flowctl's is the default, 128 KiB); the result,
	// greeting and shouted, goes over the worker's.
	marker := "codec-marker-" + strings.Repeat("abc", 30)
	cmd := exec.Command(ctlBin, "--address", address, "--blob-url", mustFileURL(t, blobs),
		"start", "hello", "--input", fmt.Sprintf(`{"name":%q}`, marker), "--wait", "-o", "json")
	out, err := cmd.Output()
	require.NoError(t, err, "flowctl start: %s", out)
	var d runs.Description
	require.NoError(t, flowctl.DecodeJSON(out, &d), string(out))
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)

	// The history holds a reference, not the result: what the UI gets from the server.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tc, err := client.DialContext(ctx, client.Options{HostPort: address, Logger: logging.NewSDKLogger(nil, "off")})
	require.NoError(t, err)
	defer tc.Close()
	var result bool
	it := tc.GetWorkflowHistory(ctx, d.ID, d.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if a := e.GetWorkflowExecutionCompletedEventAttributes(); a != nil {
			result = blob.IsRef(a.GetResult().GetPayloads()[0])
		}
	}
	require.True(t, result, "the run's result is a reference in the history")

	artifacts, err := filepath.Abs(filepath.Join("..", "..", "test-artifacts"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(artifacts, 0o755))
	page := fmt.Sprintf("%s/namespaces/default/workflows/%s/%s/history", ui, d.ID, d.RunID)
	checkPage(t, browser, page, filepath.Join(artifacts, "webui-codec.png"),
		regexp.QuoteMeta(`"name": "`+marker),            // the input
		regexp.QuoteMeta(`"greeting": "Hello, `+marker), // the result
		regexp.QuoteMeta(strings.ToUpper(marker)))
	text, err := browser.text()
	require.NoError(t, err)
	assert.NotContains(t, text, "in blob store "+blob.KeyPrefix, "a reference shows instead of a value")
}
