package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	gblob "gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"

	// Drivers of the URL schemes Open accepts (file:// is fileblob, imported above).
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// ErrNotFound is what a NotFoundError matches with errors.Is.
var ErrNotFound = errors.New("blob not found")

// NotFoundError reports a key the store does not hold.
type NotFoundError struct {
	// Key is the missing key.
	Key string
	// Store is the store's URL.
	Store string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("blob %q not found in %s", e.Key, e.Store)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Store keeps blobs by key. It is safe for concurrent use.
type Store struct {
	bucket *gblob.Bucket
	url    string
}

// Schemes are the URL schemes Open accepts.
var Schemes = []string{"file", "s3", "gs", "azblob"}

// Open opens the store at rawURL (see the package doc). A file:// directory is created
// when missing.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob store URL %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "file":
		dir := u.Path
		if dir == "" || !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("blob store URL %q: a file:// URL needs an absolute directory, e.g. file:///var/lib/gateflow/blobs", rawURL)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("blob store %s: %w", rawURL, err)
		}
		// Temporary files stay inside the directory so writes are atomic renames; no
		// .attrs sidecar files (the store keeps no attributes).
		b, err := fileblob.OpenBucket(dir, &fileblob.Options{NoTempDir: true, Metadata: fileblob.MetadataDontWrite})
		if err != nil {
			return nil, fmt.Errorf("blob store %s: %w", rawURL, err)
		}
		return &Store{bucket: b, url: rawURL}, nil
	case "s3", "gs", "azblob":
		if u.Host == "" {
			return nil, fmt.Errorf("blob store URL %q names no bucket", rawURL)
		}
		b, err := gblob.OpenBucket(ctx, rawURL)
		if err != nil {
			return nil, fmt.Errorf("blob store %s: %w", rawURL, err)
		}
		return &Store{bucket: b, url: rawURL}, nil
	case "":
		return nil, fmt.Errorf("blob store URL %q has no scheme (want one of %s)", rawURL, strings.Join(Schemes, ", "))
	default:
		return nil, fmt.Errorf("blob store URL %q: unsupported scheme %q (want one of %s)", rawURL, u.Scheme, strings.Join(Schemes, ", "))
	}
}

// FileURL is the file:// URL of directory dir (made absolute).
func FileURL(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("blob store directory %s: %w", dir, err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// DevURL is the default store of a dev server: a "blobs" directory next to its SQLite
// file dbFile, or, for an in-memory server (dbFile empty), DevTempDir.
func DevURL(dbFile string) (string, error) {
	if dbFile == "" {
		return FileURL(DevTempDir())
	}
	return FileURL(strings.TrimSuffix(dbFile, filepath.Ext(dbFile)) + "-blobs")
}

// DevTempDir is the store directory of in-memory dev servers, in the system's temporary
// directory, so flowctl on the same machine finds it without being told.
func DevTempDir() string { return filepath.Join(os.TempDir(), "gateflow-blobs") }

// URL is the store's URL.
func (s *Store) URL() string { return s.url }

// Put stores data under key, replacing what was there.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.bucket.WriteAll(ctx, key, data, nil); err != nil {
		return fmt.Errorf("blob store %s: put %q: %w", s.url, key, err)
	}
	return nil
}

// Get reads the blob under key; a missing key is a *NotFoundError.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	data, err := s.bucket.ReadAll(ctx, key)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, &NotFoundError{Key: key, Store: s.url}
		}
		return nil, fmt.Errorf("blob store %s: get %q: %w", s.url, key, err)
	}
	return data, nil
}

// NewWriter starts writing the blob under key, replacing what was there once Close
// returns nil; the data streams through (a file:// store writes it to a temporary file in
// its directory, renamed into place by Close), so a blob of any size costs bounded
// memory. Cancelling ctx before Close abandons the write.
func (s *Store) NewWriter(ctx context.Context, key string) (io.WriteCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	w, err := s.bucket.NewWriter(ctx, key, &gblob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return nil, fmt.Errorf("blob store %s: write %q: %w", s.url, key, err)
	}
	return w, nil
}

// NewReader opens the blob under key for streaming; a missing key is a *NotFoundError.
func (s *Store) NewReader(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, &NotFoundError{Key: key, Store: s.url}
		}
		return nil, fmt.Errorf("blob store %s: read %q: %w", s.url, key, err)
	}
	return r, nil
}

// Exists reports whether the store holds key.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	ok, err := s.bucket.Exists(ctx, key)
	if err != nil {
		return false, fmt.Errorf("blob store %s: exists %q: %w", s.url, key, err)
	}
	return ok, nil
}

// Delete removes key; a missing key is a *NotFoundError.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.bucket.Delete(ctx, key); err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return &NotFoundError{Key: key, Store: s.url}
		}
		return fmt.Errorf("blob store %s: delete %q: %w", s.url, key, err)
	}
	return nil
}

// Close releases the store's resources.
func (s *Store) Close() error {
	if err := s.bucket.Close(); err != nil {
		return fmt.Errorf("blob store %s: close: %w", s.url, err)
	}
	return nil
}

// checkKey refuses keys the stores disagree on: empty, absolute, with "." or ".." parts,
// backslashes or control characters.
func checkKey(key string) error {
	if key == "" {
		return errors.New("blob key is empty")
	}
	if strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") || strings.Contains(key, "\\") {
		return fmt.Errorf("blob key %q: want a relative path like runs/abc/out.txt", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("blob key %q has an empty, . or .. part", key)
		}
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("blob key %q has a control character", key)
		}
	}
	return nil
}
