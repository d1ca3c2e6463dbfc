package flowclient

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/blob"
)

func TestWithPayloadStore(t *testing.T) {
	ctx := context.Background()
	if _, _, err := WithPayloadStore(ctx, client.Options{}, PayloadStore{}); err == nil || !strings.Contains(err.Error(), "no URL") {
		t.Fatalf("no URL: %v", err)
	}
	if _, _, err := WithPayloadStore(ctx, client.Options{}, PayloadStore{URL: "ftp://x"}); err == nil || !strings.Contains(err.Error(), "ftp") {
		t.Fatalf("bad scheme: %v", err)
	}
	u, err := blob.FileURL(filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := WithPayloadStore(ctx, client.Options{}, PayloadStore{URL: u, Threshold: -5}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("negative threshold: %v", err)
	}
	o, closer, err := WithPayloadStore(ctx, client.Options{Namespace: "ns"}, PayloadStore{URL: u, Threshold: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	if o.Namespace != "ns" || o.DataConverter == nil {
		t.Fatalf("options: %+v", o)
	}
	ps, err := o.DataConverter.ToPayloads("tiny", strings.Repeat("b", 500))
	if err != nil || len(ps.GetPayloads()) != 2 {
		t.Fatalf("payloads: %v %v", ps, err)
	}
	if blob.IsRef(ps.Payloads[0]) {
		t.Fatalf("small payload offloaded: %v", ps.Payloads[0])
	}
	big := ps.Payloads[1]
	if !blob.IsRef(big) {
		t.Fatalf("big payload not offloaded: %v", big)
	}
	var back string
	if err := o.DataConverter.FromPayload(big, &back); err != nil || back != strings.Repeat("b", 500) {
		t.Fatalf("round trip: %d %v", len(back), err)
	}
	// A single value (how the SDK encodes memos) stays in the history.
	memo, err := o.DataConverter.ToPayload(strings.Repeat("m", 500))
	if err != nil || blob.IsRef(memo) {
		t.Fatalf("a memo-like single value was offloaded: %v %v", memo.GetMetadata(), err)
	}
}
