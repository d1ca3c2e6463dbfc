package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"sync"
)

// Shell output: the result a shell step returns to its workflow carries at most
// MaxOutputBytes of each stream (the head of stdout, the tail of stderr), whatever the
// command prints, so the workflow never decodes a big result. A stream longer than that
// goes whole (up to the step's OutputLimit) to the worker's blob store as the command
// writes it (WithOutputStore), and the result refers to it (ShellResult.StdoutBlob,
// StderrBlob); `flowctl logs` prints it from there. The output is never held in memory as
// a whole.

// OutputStore keeps the whole stdout and stderr of shell steps whose output is longer
// than their result keeps; the worker's blob store is one.
type OutputStore interface {
	// NewWriter starts the blob key; it holds what was written once Close returns nil.
	NewWriter(ctx context.Context, key string) (io.WriteCloser, error)
}

type outputStoreKey struct{}

// WithOutputStore returns ctx telling RunShell to stream the output of commands that print
// more than their result keeps to s. A worker built with flow.NewWorker and a BlobURL
// registers RunShell with its store.
func WithOutputStore(ctx context.Context, s OutputStore) context.Context {
	return context.WithValue(ctx, outputStoreKey{}, s)
}

func outputStoreOf(ctx context.Context) OutputStore {
	s, _ := ctx.Value(outputStoreKey{}).(OutputStore)
	return s
}

// StoredOutput is one whole output stream of a shell step, kept in the worker's blob store
// because it was longer than the result keeps.
type StoredOutput struct {
	// Key is the blob key: outputs/<workflow ID>/<run ID>/<step ID>/<attempt>/stdout (or
	// stderr), each part path-escaped.
	Key string `json:"key"`
	// Size is the length of the blob in bytes; SHA256 the hex digest of its content.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Cut is set when the stream was longer than the step's OutputLimit: the blob holds its
	// first Size bytes.
	Cut bool `json:"cut,omitempty"`
}

// outputStream collects one output stream of a command: a preview of at most preview
// bytes (its head, or with keepTail its tail), the count of all bytes and, once the
// stream outgrows the preview and a store is given, the stream itself up to limit bytes,
// written to the store as it comes. Its Write never fails, so the command's pipe is
// always drained; a store error is kept and reported by finish.
type outputStream struct {
	mu      sync.Mutex
	preview int
	limit   int64
	head    []byte  // the first preview bytes
	tail    *capped // the last preview bytes, with keepTail
	total   int64

	open   func() (io.WriteCloser, error) // nil: no store
	w      io.WriteCloser
	sum    hash.Hash
	stored int64
	cut    bool
	err    error
}

// newOutputStream collects a stream; open (nil: no store) starts its blob.
func newOutputStream(preview int, limit int64, keepTail bool, open func() (io.WriteCloser, error)) *outputStream {
	s := &outputStream{preview: preview, limit: max(limit, int64(preview)), open: open}
	if keepTail {
		s.tail = &capped{limit: preview, keepTail: true}
	}
	return s
}

// Write implements io.Writer.
func (s *outputStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	s.total += int64(n)
	if s.tail != nil {
		_, _ = s.tail.Write(p)
	}
	if room := s.preview - len(s.head); room > 0 {
		k := min(room, len(p))
		s.head = append(s.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || s.open == nil || s.err != nil {
		return n, nil
	}
	if s.w == nil {
		if s.err = s.start(); s.err != nil {
			return n, nil
		}
	}
	s.store(p)
	return n, nil
}

// start opens the blob and writes the head into it.
func (s *outputStream) start() error {
	w, err := s.open()
	if err != nil {
		return err
	}
	s.w, s.sum = w, sha256.New()
	s.store(s.head)
	return s.err
}

// store writes p to the blob, up to the limit.
func (s *outputStream) store(p []byte) {
	if room := s.limit - s.stored; int64(len(p)) > room {
		s.cut = true
		p = p[:room]
	}
	if len(p) == 0 {
		return
	}
	if _, err := s.w.Write(p); err != nil {
		s.err = err
		return
	}
	s.sum.Write(p)
	s.stored += int64(len(p))
}

// truncated reports whether the preview lacks part of the stream.
func (s *outputStream) truncated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total > int64(s.preview)
}

// String is the preview: the stream's head, or with keepTail its tail.
func (s *outputStream) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tail != nil {
		return s.tail.String()
	}
	return string(s.head)
}

// bytes is how many bytes the stream had.
func (s *outputStream) bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// finish closes the blob, if the stream needed one: nil and no error when it did not.
func (s *outputStream) finish(key string) (*StoredOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil, s.err
	}
	if err := s.w.Close(); err != nil && s.err == nil {
		s.err = err
	}
	if s.err != nil {
		return nil, s.err
	}
	return &StoredOutput{Key: key, Size: s.stored, SHA256: hex.EncodeToString(s.sum.Sum(nil)), Cut: s.cut}, nil
}

// shellStreams are the stdout and stderr of one attempt of a command.
type shellStreams struct {
	stdout, stderr *outputStream
	keys           [2]string
}

// newShellStreams collects the output of one attempt under ctx: previews of at most
// min(OutputLimit, MaxOutputBytes) bytes, and with an output store (opened on storeCtx, so
// that a command killed at its timeout still keeps its output) the whole streams up to
// OutputLimit.
func newShellStreams(ctx, storeCtx context.Context, attempt int) *shellStreams {
	limit := OutputLimit(ctx)
	preview := min(limit, MaxOutputBytes)
	prefix := outputKeyPrefix(ctx, attempt)
	ss := &shellStreams{keys: [2]string{prefix + "/stdout", prefix + "/stderr"}}
	opener := func(key string) func() (io.WriteCloser, error) {
		store := outputStoreOf(ctx)
		if store == nil || limit <= preview {
			return nil // the result keeps all there is to keep
		}
		return func() (io.WriteCloser, error) { return store.NewWriter(storeCtx, key) }
	}
	ss.stdout = newOutputStream(preview, int64(limit), false, opener(ss.keys[0]))
	ss.stderr = newOutputStream(preview, int64(limit), true, opener(ss.keys[1]))
	return ss
}

// fill sets the output fields of res and closes the blobs. A store that failed leaves
// the previews, and says why in OutputStoreError.
func (ss *shellStreams) fill(res *ShellResult) {
	res.Stdout, res.Stderr = ss.stdout.String(), ss.stderr.String()
	res.StdoutBytes, res.StderrBytes = ss.stdout.bytes(), ss.stderr.bytes()
	res.Truncated = ss.stdout.truncated() || ss.stderr.truncated()
	var err error
	res.StdoutBlob, err = ss.stdout.finish(ss.keys[0])
	if err != nil {
		res.OutputStoreError = fmt.Sprintf("stdout: %v", err)
	}
	res.StderrBlob, err = ss.stderr.finish(ss.keys[1])
	if err != nil && res.OutputStoreError == "" {
		res.OutputStoreError = fmt.Sprintf("stderr: %v", err)
	}
	if !res.Truncated {
		return
	}
	// The bound that cut what the step kept: the store's, or the result's.
	res.OutputLimit = ss.stdout.preview
	for _, b := range []*StoredOutput{res.StdoutBlob, res.StderrBlob} {
		if b != nil && b.Cut {
			res.OutputLimit = int(ss.stdout.limit)
		}
	}
}

// StdoutCut reports whether Stdout lacks part of what the command printed (it holds the
// head of it; StdoutBlob, when set, the whole).
func (r ShellResult) StdoutCut() bool {
	if r.StdoutBytes == 0 { // a worker from before StdoutBytes: a cut stdout filled its bound
		limit := r.OutputLimit
		if limit == 0 {
			limit = MaxOutputBytes
		}
		return r.Truncated && len(r.Stdout) >= limit
	}
	return r.StdoutBytes > int64(len(r.Stdout))
}

// outputKeyPrefix is the blob key prefix of one attempt's output streams:
// outputs/<workflow ID>/<run ID>/<step ID>/<attempt>.
func outputKeyPrefix(ctx context.Context, attempt int) string {
	wf, run, step := stepKeyParts(ctx)
	return stepKeyPrefix("outputs", wf, run, step, attempt)
}
