package activities

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/blob"
)

// memOutputStore is an OutputStore in memory; failAfter > 0 makes writers fail once they
// hold that many bytes.
type memOutputStore struct {
	mu        sync.Mutex
	blobs     map[string][]byte
	failAfter int
	opens     int
}

func (m *memOutputStore) NewWriter(_ context.Context, key string) (io.WriteCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opens++
	return &memWriter{store: m, key: key}, nil
}

func (m *memOutputStore) get(t *testing.T, key string) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[key]
	require.True(t, ok, "blob %s", key)
	return string(b)
}

type memWriter struct {
	store *memOutputStore
	key   string
	buf   bytes.Buffer
}

func (w *memWriter) Write(p []byte) (int, error) {
	if f := w.store.failAfter; f > 0 && w.buf.Len()+len(p) > f {
		return 0, errors.New("disk full")
	}
	return w.buf.Write(p)
}

func (w *memWriter) Close() error {
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	if w.store.blobs == nil {
		w.store.blobs = map[string][]byte{}
	}
	w.store.blobs[w.key] = w.buf.Bytes()
	return nil
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestOutputStreamProperties writes random streams in random chunks through outputStream
// with random bounds, with and without a store (sometimes failing); checkOutputStream says
// what must hold.
func TestOutputStreamProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for i := range 2000 {
		data := make([]byte, rng.IntN(400))
		for j := range data {
			data[j] = byte('a' + rng.IntN(26))
		}
		chunks := make([]byte, 1+rng.IntN(40))
		for j := range chunks {
			chunks[j] = byte(rng.IntN(50))
		}
		checkOutputStream(t, fmt.Sprint("case ", i), data, chunks, 1+rng.IntN(64), rng.IntN(256), rng.IntN(2) == 0, rng.IntN(3), rng.IntN(300))
	}
}

// FuzzOutputStream checks the properties of checkOutputStream on fuzzed streams.
func FuzzOutputStream(f *testing.F) {
	f.Add([]byte("hello, world\n"), []byte{3, 0, 7}, 4, 8, false, 1, 0)
	f.Add([]byte("a tail of stderr"), []byte{1}, 5, 0, true, 2, 6)
	f.Fuzz(func(t *testing.T, data, chunks []byte, preview, limit int, keepTail bool, storeMode, failAfter int) {
		preview, limit = 1+abs(preview)%128, abs(limit)%1024
		checkOutputStream(t, "fuzz", data, chunks, preview, limit, keepTail, abs(storeMode)%3, abs(failAfter)%1024)
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

// checkOutputStream writes data through an outputStream in the chunk sizes of chunks (cycled;
// 0 is an empty write) and checks what it keeps: the preview is the stream's head (or
// tail) and never longer than its bound, the count is exact, Write never fails, the blob
// exists only for a stream longer than the preview and holds exactly its first
// min(len, limit) bytes. storeMode: 0 no store, 1 a store, 2 a store failing after
// failAfter bytes.
func checkOutputStream(t *testing.T, name string, data, chunks []byte, preview, limit int, keepTail bool, storeMode, failAfter int) {
	t.Helper()
	var store *memOutputStore
	var open func() (io.WriteCloser, error)
	if storeMode > 0 {
		store = &memOutputStore{}
		if storeMode == 2 {
			store.failAfter = 1 + failAfter
		}
		open = func() (io.WriteCloser, error) { return store.NewWriter(context.Background(), "k") }
	}
	s := newOutputStream(preview, int64(limit), keepTail, open)
	if len(chunks) == 0 {
		chunks = []byte{0}
	}
	for i, rest := 0, data; len(rest) > 0; i++ {
		k := min(len(rest), int(chunks[i%len(chunks)]))
		if i >= len(chunks) && k == 0 && slices.Max(chunks) == 0 {
			k = len(rest) // only empty writes: the rest at once
		}
		n, err := s.Write(rest[:k])
		require.NoError(t, err, name)
		require.Equal(t, k, n, name)
		rest = rest[k:]
	}
	stored, err := s.finish("k")

	total := len(data)
	p := s.String()
	require.LessOrEqual(t, len(p), preview, "%s: the preview is bounded", name)
	require.Equal(t, int64(total), s.bytes(), name)
	require.Equal(t, total > preview, s.truncated(), name)
	if keepTail {
		require.Equal(t, string(data[max(0, total-preview):]), p, "%s: the tail", name)
	} else {
		require.Equal(t, string(data[:min(total, preview)]), p, "%s: the head", name)
	}
	bound := max(limit, preview)
	switch {
	case store == nil || total <= preview:
		require.NoError(t, err, name)
		require.Nil(t, stored, "%s: no blob", name)
		if store != nil {
			require.Zero(t, store.opens, "%s: a short stream opens no blob", name)
		}
	case store.failAfter > 0 && store.failAfter < min(total, bound):
		require.Error(t, err, "%s: the store failed", name)
		require.Nil(t, stored, name)
	default:
		require.NoError(t, err, name)
		require.NotNil(t, stored, name)
		want := string(data[:min(total, bound)])
		require.Equal(t, want, store.get(t, "k"), "%s: the blob is the stream's head", name)
		require.Equal(t, StoredOutput{Key: "k", Size: int64(len(want)), SHA256: sha256Hex(want), Cut: total > bound}, *stored, name)
	}
}

// hugeCommand prints 100 MB on stdout and a line on stderr.
const hugeCommand = "head -c 100000000 /dev/zero | tr '\\0' a; echo the-end >&2"

// TestRunShellHugeOutputIsBoundedAndStreamed runs a real process printing 100 MB under the
// flow-worker's default limit with a blob store: the result is bounded and says how much
// there was, the store holds the whole stdout, and the heap never held a copy of it.
func TestRunShellHugeOutputIsBoundedAndStreamed(t *testing.T) {
	const size = 100_000_000
	u, err := blob.FileURL(t.TempDir())
	require.NoError(t, err)
	store, err := blob.Open(context.Background(), u)
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	ctx := WithOutputStore(WithOutputLimit(context.Background(), MaxStoredOutputBytes), store)

	peak := watchHeap(t)
	res, err := RunShell(ctx, Shell{Command: hugeCommand})
	require.NoError(t, err)
	heap := peak()
	runtime.KeepAlive(res)
	t.Logf("peak heap in use while it ran: %d bytes", heap)
	assert.Less(t, heap, uint64(48<<20), "the heap held the output")

	payload, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Less(t, len(payload), 2*MaxOutputBytes+4<<10, "the result's size")
	assert.True(t, res.Truncated)
	assert.True(t, res.StdoutCut())
	assert.Equal(t, int64(size), res.StdoutBytes)
	assert.Equal(t, int64(len("the-end\n")), res.StderrBytes)
	assert.Equal(t, strings.Repeat("a", MaxOutputBytes), res.Stdout)
	assert.Equal(t, "the-end\n", res.Stderr)
	require.NotNil(t, res.StdoutBlob)
	assert.Nil(t, res.StderrBlob)
	assert.Empty(t, res.OutputStoreError)

	r, err := store.NewReader(context.Background(), res.StdoutBlob.Key)
	require.NoError(t, err)
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	require.NoError(t, err)
	assert.Equal(t, int64(size), n)
	assert.Equal(t, hex.EncodeToString(h.Sum(nil)), res.StdoutBlob.SHA256)
	assert.Equal(t, int64(size), res.StdoutBlob.Size)
	assert.False(t, res.StdoutBlob.Cut)
}

// TestRunShellHugeOutputWithoutAStore: without a store the result keeps the preview and
// the count, and the heap stays bounded too.
func TestRunShellHugeOutputWithoutAStore(t *testing.T) {
	peak := watchHeap(t)
	res, err := RunShell(WithOutputLimit(context.Background(), MaxStoredOutputBytes), Shell{Command: hugeCommand})
	require.NoError(t, err)
	heap := peak()
	runtime.KeepAlive(res)
	assert.Less(t, heap, uint64(48<<20), "the heap held the output")
	assert.Len(t, res.Stdout, MaxOutputBytes)
	assert.Equal(t, int64(100_000_000), res.StdoutBytes)
	assert.Nil(t, res.StdoutBlob)
	assert.Equal(t, MaxOutputBytes, res.OutputLimit)
}

// TestRunShellKeepsThePreviewWhenTheStoreFails: a store that fails mid-stream does not
// fail the command; the result keeps the preview and says why the blob is missing.
func TestRunShellKeepsThePreviewWhenTheStoreFails(t *testing.T) {
	store := &memOutputStore{failAfter: 1 << 20}
	res, err := RunShell(WithOutputStore(WithOutputLimit(context.Background(), 8<<20), store),
		Shell{Command: "head -c 3000000 /dev/zero | tr '\\0' x"})
	require.NoError(t, err)
	assert.Nil(t, res.StdoutBlob)
	assert.Equal(t, "stdout: disk full", res.OutputStoreError)
	assert.Len(t, res.Stdout, MaxOutputBytes)
	assert.Equal(t, int64(3000000), res.StdoutBytes)
}

// watchHeap samples the heap in use every few milliseconds until the returned function is
// called, which returns the peak minus the heap in use at the start.
func watchHeap(t *testing.T) func() uint64 {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return max(peak, ms.HeapInuse) - base
	}
}
