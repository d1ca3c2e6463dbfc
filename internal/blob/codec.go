package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// DefaultThreshold is the payload size (bytes, as serialized) above which Codec offloads
// a payload to the store.
const DefaultThreshold = 128 << 10

// Metadata of a reference payload.
const (
	// EncodingRef is the encoding of a reference payload.
	EncodingRef = "binary/gateflow-blob-ref"
	// MetaKey names the blob's key.
	MetaKey = "gateflow-blob-key"
	// MetaSize is the size in bytes of the serialized original payload.
	MetaSize = "gateflow-blob-size"
	// MetaSHA256 is the hex SHA-256 of the serialized original payload.
	MetaSHA256 = "gateflow-blob-sha256"
)

// KeyPrefix is the prefix of the keys of offloaded payloads; the rest is their SHA-256, so
// the same payload is stored once.
const KeyPrefix = "payloads/"

// CodecOptions configure a Codec.
type CodecOptions struct {
	// Threshold is the serialized size in bytes above which a payload is offloaded. 0 means
	// DefaultThreshold; negative is an error.
	Threshold int
	// Timeout bounds each store call. Default 30s.
	Timeout time.Duration
	// ReadOnly makes the codec only resolve references: Encode never offloads (a client
	// that guessed its store must not leave payloads where workers cannot read them).
	ReadOnly bool
}

// Codec is a converter.PayloadCodec offloading big payloads to a Store (claim check).
type Codec struct {
	store     *Store
	threshold int
	timeout   time.Duration
	readOnly  bool
}

var _ converter.PayloadCodec = (*Codec)(nil)

// NewCodec is a codec on store.
func NewCodec(store *Store, opts CodecOptions) (*Codec, error) {
	if store == nil {
		return nil, fmt.Errorf("blob codec: no store")
	}
	if opts.Threshold < 0 {
		return nil, fmt.Errorf("blob codec: threshold %d is negative", opts.Threshold)
	}
	if opts.Threshold == 0 {
		opts.Threshold = DefaultThreshold
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	return &Codec{store: store, threshold: opts.Threshold, timeout: opts.Timeout, readOnly: opts.ReadOnly}, nil
}

// Store is the store the codec keeps payloads in.
func (c *Codec) Store() *Store { return c.store }

// Threshold is the size above which payloads are offloaded.
func (c *Codec) Threshold() int { return c.threshold }

// Encode offloads the payloads bigger than the threshold and replaces them by references
// (a ReadOnly codec passes every payload through).
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if c.readOnly {
		return payloads, nil
	}
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if p == nil || proto.Size(p) <= c.threshold || IsRef(p) {
			out[i] = p
			continue
		}
		data, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("blob codec: serialize payload: %w", err)
		}
		sum := sha256.Sum256(data)
		hash := hex.EncodeToString(sum[:])
		key := KeyPrefix + hash
		if err := c.put(key, data); err != nil {
			return nil, fmt.Errorf("blob codec: offload payload of %d bytes: %w", len(data), err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{
				converter.MetadataEncoding: []byte(EncodingRef),
				MetaKey:                    []byte(key),
				MetaSize:                   []byte(strconv.Itoa(len(data))),
				MetaSHA256:                 []byte(hash),
			},
			Data: []byte(fmt.Sprintf("payload of %d bytes in blob store %s", len(data), key)),
		}
	}
	return out, nil
}

func (c *Codec) put(key string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// The key is the content's hash: a blob already there is this payload.
	if ok, err := c.store.Exists(ctx, key); err == nil && ok {
		return nil
	}
	return c.store.Put(ctx, key, data)
}

// Decode fetches the payloads that references point to and checks their size and hash;
// other payloads pass unchanged.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if !IsRef(p) {
			out[i] = p
			continue
		}
		orig, err := c.fetch(p)
		if err != nil {
			return nil, err
		}
		out[i] = orig
	}
	return out, nil
}

func (c *Codec) fetch(ref *commonpb.Payload) (*commonpb.Payload, error) {
	key := string(ref.Metadata[MetaKey])
	want := string(ref.Metadata[MetaSHA256])
	if key == "" || want == "" {
		return nil, fmt.Errorf("blob codec: reference payload without %s or %s", MetaKey, MetaSHA256)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	data, err := c.store.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("blob codec: fetch offloaded payload: %w", err)
	}
	if size := string(ref.Metadata[MetaSize]); size != "" && size != strconv.Itoa(len(data)) {
		return nil, fmt.Errorf("blob codec: blob %q in %s has %d bytes, the reference says %s", key, c.store.URL(), len(data), size)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return nil, fmt.Errorf("blob codec: blob %q in %s has SHA-256 %s, the reference says %s (changed or corrupt)", key, c.store.URL(), got, want)
	}
	var p commonpb.Payload
	if err := proto.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("blob codec: blob %q in %s is not a payload: %w", key, c.store.URL(), err)
	}
	return &p, nil
}

// IsRef reports whether p is a reference to an offloaded payload.
func IsRef(p *commonpb.Payload) bool {
	return p != nil && string(p.GetMetadata()[converter.MetadataEncoding]) == EncodingRef
}

// DataConverter is base (nil: the SDK's default) with c on top, for the payloads the SDK
// encodes as lists (ToPayloads: workflow and activity inputs and results, signals,
// updates, queries, heartbeats). A single value (ToPayload) stays in the history,
// encoded by base: that is how the SDK encodes memos (and user metadata, failure
// attributes), which the server keeps next to the run and which gateflow's clients read
// with Temporal's default converter (the catalog, a run's state); a memo replaced by a
// reference would leave them unreadable.
func DataConverter(base converter.DataConverter, c *Codec) converter.DataConverter {
	if base == nil {
		base = converter.GetDefaultDataConverter()
	}
	return inlineSingles{DataConverter: converter.NewCodecDataConverter(base, c), base: base}
}

// inlineSingles offloads through its DataConverter except in ToPayload (see DataConverter);
// decoding resolves references whatever produced them.
type inlineSingles struct {
	converter.DataConverter
	base converter.DataConverter
}

// ToPayload encodes value with the base converter only.
func (d inlineSingles) ToPayload(value any) (*commonpb.Payload, error) {
	return d.base.ToPayload(value)
}

// HTTPHandler serves c as a Temporal codec server (POST /encode and /decode, see
// converter.NewPayloadCodecHTTPHandler) to Web UIs at the origins allowed (e.g.
// http://127.0.0.1:8233), answering their CORS preflight requests.
func HTTPHandler(c converter.PayloadCodec, allowOrigins ...string) http.Handler {
	h := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin")
		if origin := r.Header.Get("Origin"); origin != "" && slices.Contains(allowOrigins, origin) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization")
			w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}
