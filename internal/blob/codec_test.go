package blob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func newCodec(t *testing.T, threshold int) (*Codec, *Store) {
	t.Helper()
	s := openFile(t)
	c, err := NewCodec(s, CodecOptions{Threshold: threshold})
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func jsonPayload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCodecRoundTripAndThreshold(t *testing.T) {
	c, s := newCodec(t, 1024)
	small := jsonPayload(t, "hello")
	big := jsonPayload(t, strings.Repeat("x", 4096))
	enc, err := c.Encode([]*commonpb.Payload{small, big, nil})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(enc[0], small) || IsRef(enc[0]) {
		t.Fatalf("small payload changed: %v", enc[0])
	}
	if enc[2] != nil {
		t.Fatalf("nil payload became %v", enc[2])
	}
	ref := enc[1]
	if !IsRef(ref) || proto.Size(ref) > 512 {
		t.Fatalf("big payload not replaced by a small reference: %d bytes, %v", proto.Size(ref), ref.Metadata)
	}
	key := string(ref.Metadata[MetaKey])
	if !strings.HasPrefix(key, KeyPrefix) || string(ref.Metadata[MetaSize]) != strconv.Itoa(proto.Size(big)) || len(ref.Metadata[MetaSHA256]) != 64 {
		t.Fatalf("reference metadata: %v", ref.Metadata)
	}
	if ok, err := s.Exists(context.Background(), key); err != nil || !ok {
		t.Fatalf("blob %s not in the store: %v %v", key, ok, err)
	}
	dec, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(dec[1], big) || !proto.Equal(dec[0], small) {
		t.Fatal("decode did not give the original payloads back")
	}
	// Through a data converter, values come back whole.
	dc := DataConverter(nil, c)
	ps, err := dc.ToPayloads(strings.Repeat("y", 2000), "small")
	if err != nil || len(ps.GetPayloads()) != 2 || !IsRef(ps.Payloads[0]) || IsRef(ps.Payloads[1]) {
		t.Fatalf("data converter did not offload the big value only: %v %v", ps, err)
	}
	var back, little string
	if err := dc.FromPayloads(ps, &back, &little); err != nil || back != strings.Repeat("y", 2000) || little != "small" {
		t.Fatalf("data converter round trip: %d chars, %q, %v", len(back), little, err)
	}
	if err := dc.FromPayload(ps.Payloads[0], &back); err != nil || back != strings.Repeat("y", 2000) {
		t.Fatalf("data converter round trip of one payload: %d chars, %v", len(back), err)
	}
}

// A single value, as the SDK encodes memos, stays in the history, readable by Temporal's
// default converter (gateflow's catalog and run state readers).
func TestDataConverterKeepsSingleValuesInline(t *testing.T) {
	c, _ := newCodec(t, 64)
	dc := DataConverter(nil, c)
	memo := map[string]string{"catalog": strings.Repeat("z", 1000)}
	p, err := dc.ToPayload(memo)
	if err != nil || IsRef(p) {
		t.Fatalf("a single value was offloaded: %v %v", p.GetMetadata(), err)
	}
	var got map[string]string
	if err := converter.GetDefaultDataConverter().FromPayload(p, &got); err != nil || got["catalog"] != memo["catalog"] {
		t.Fatalf("the default converter cannot read it: %v", err)
	}
	if err := dc.FromPayload(p, &got); err != nil || got["catalog"] != memo["catalog"] {
		t.Fatalf("the data converter cannot read it: %v", err)
	}
}

func TestCodecDefaultThreshold(t *testing.T) {
	c, _ := newCodec(t, 0)
	if c.Threshold() != DefaultThreshold {
		t.Fatalf("threshold %d", c.Threshold())
	}
	enc, err := c.Encode([]*commonpb.Payload{jsonPayload(t, strings.Repeat("x", 100<<10)), jsonPayload(t, strings.Repeat("x", 200<<10))})
	if err != nil {
		t.Fatal(err)
	}
	if IsRef(enc[0]) || !IsRef(enc[1]) {
		t.Fatalf("100 KiB offloaded %v, 200 KiB offloaded %v; want false, true", IsRef(enc[0]), IsRef(enc[1]))
	}
	if _, err := NewCodec(openFile(t), CodecOptions{Threshold: -1}); err == nil {
		t.Fatal("negative threshold accepted")
	}
}

func TestCodecHashMismatch(t *testing.T) {
	c, s := newCodec(t, 16)
	enc, err := c.Encode([]*commonpb.Payload{jsonPayload(t, strings.Repeat("z", 100))})
	if err != nil {
		t.Fatal(err)
	}
	key := string(enc[0].Metadata[MetaKey])
	data, _ := s.Get(context.Background(), key)
	data[len(data)-1] ^= 1 // same size, different bytes
	if err := s.Put(context.Background(), key, data); err != nil {
		t.Fatal(err)
	}
	_, err = c.Decode(enc)
	if err == nil || !strings.Contains(err.Error(), "SHA-256") || !strings.Contains(err.Error(), key) {
		t.Fatalf("Decode of a changed blob = %v; want a SHA-256 mismatch naming the key", err)
	}
}

func TestCodecMissingBlob(t *testing.T) {
	c, s := newCodec(t, 16)
	enc, err := c.Encode([]*commonpb.Payload{jsonPayload(t, strings.Repeat("z", 100))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(context.Background(), string(enc[0].Metadata[MetaKey])); err != nil {
		t.Fatal(err)
	}
	_, err = c.Decode(enc)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Decode of a deleted blob = %v; want ErrNotFound", err)
	}
	bad := &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(EncodingRef)}}
	if _, err := c.Decode([]*commonpb.Payload{bad}); err == nil || !strings.Contains(err.Error(), MetaKey) {
		t.Fatalf("Decode of a reference without a key = %v", err)
	}
}

func TestHTTPHandlerDecodesForTheUI(t *testing.T) {
	c, _ := newCodec(t, 64)
	big := jsonPayload(t, strings.Repeat("w", 500))
	enc, err := c.Encode([]*commonpb.Payload{big})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(c, "http://127.0.0.1:8233"))
	defer srv.Close()

	pre, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	pre.Header.Set("Origin", "http://127.0.0.1:8233")
	resp, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8233" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-Namespace") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}

	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Post(srv.URL+"/decode", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil || resp.StatusCode != 200 {
		t.Fatalf("decode: %d %v", resp.StatusCode, err)
	}
	var out commonpb.Payloads
	if err := protojson.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Payloads) != 1 || !proto.Equal(out.Payloads[0], big) {
		t.Fatalf("decoded payloads: %v", out.Payloads)
	}
}

func TestCodecReadOnlyResolvesButNeverOffloads(t *testing.T) {
	writer, s := newCodec(t, 1024)
	big := jsonPayload(t, strings.Repeat("x", 4096))
	enc, err := writer.Encode([]*commonpb.Payload{big})
	if err != nil || !IsRef(enc[0]) {
		t.Fatalf("writer did not offload: %v", err)
	}
	reader, err := NewCodec(s, CodecOptions{Threshold: 1024, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := reader.Decode(enc)
	if err != nil || !proto.Equal(dec[0], big) {
		t.Fatalf("read-only codec did not resolve the reference: %v", err)
	}
	other := jsonPayload(t, strings.Repeat("z", 4096))
	out, err := reader.Encode([]*commonpb.Payload{other})
	if err != nil {
		t.Fatal(err)
	}
	if IsRef(out[0]) || !proto.Equal(out[0], other) {
		t.Fatal("a read-only codec offloaded a payload")
	}
}
