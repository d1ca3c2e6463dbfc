package blob

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"
)

// fakeS3 serves the S3 protocol on a loopback port with an in-memory bucket and returns
// the s3:// URL of that bucket.
func fakeS3(t *testing.T, bucket string) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	// Static credentials and no instance metadata: nothing leaves the machine.
	t.Setenv("AWS_ACCESS_KEY_ID", "gateflow")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "gateflow-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	return "s3://" + bucket + "?region=us-east-1&use_path_style=true&disable_https=true&endpoint=" + srv.URL
}

func TestS3Store(t *testing.T) {
	s, err := Open(context.Background(), fakeS3(t, "gateflow-test"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exerciseStore(t, s)
}

func TestS3Codec(t *testing.T) {
	s, err := Open(context.Background(), fakeS3(t, "gateflow-codec"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := NewCodec(s, CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	big := jsonPayload(t, strings.Repeat("s3", 300<<10))
	enc, err := c.Encode([]*commonpb.Payload{big})
	if err != nil {
		t.Fatal(err)
	}
	if !IsRef(enc[0]) {
		t.Fatal("600 KiB payload not offloaded")
	}
	dec, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(dec[0], big) {
		t.Fatal("payload from S3 differs")
	}
}
