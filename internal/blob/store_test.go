package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func openFile(t *testing.T) *Store {
	t.Helper()
	u, err := FileURL(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func exerciseStore(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	if ok, err := s.Exists(ctx, "runs/r1/out.txt"); err != nil || ok {
		t.Fatalf("Exists before Put = %v, %v; want false, nil", ok, err)
	}
	_, err := s.Get(ctx, "runs/r1/out.txt")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNotFound) || nf.Key != "runs/r1/out.txt" {
		t.Fatalf("Get of a missing key = %v; want a NotFoundError naming the key", err)
	}
	want := []byte(strings.Repeat("gateflow ", 1000))
	if err := s.Put(ctx, "runs/r1/out.txt", want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "runs/r1/out.txt")
	if err != nil || string(got) != string(want) {
		t.Fatalf("Get after Put = %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	if ok, err := s.Exists(ctx, "runs/r1/out.txt"); err != nil || !ok {
		t.Fatalf("Exists after Put = %v, %v; want true, nil", ok, err)
	}
	if err := s.Put(ctx, "runs/r1/out.txt", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "runs/r1/out.txt"); string(got) != "v2" {
		t.Fatalf("Get after overwrite = %q; want v2", got)
	}
	if err := s.Delete(ctx, "runs/r1/out.txt"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Exists(ctx, "runs/r1/out.txt"); ok {
		t.Fatal("Exists after Delete = true")
	}
	if err := s.Delete(ctx, "runs/r1/out.txt"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Delete of a missing key = %v; want ErrNotFound", err)
	}
}

func TestFileStore(t *testing.T) {
	exerciseStore(t, openFile(t))
}

func TestFileStoreKeepsBlobsAcrossOpens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "blobs")
	u, _ := FileURL(dir)
	ctx := context.Background()
	s, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "a/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); err != nil {
		t.Fatalf("blob file: %v", err)
	}
	s2, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got, err := s2.Get(ctx, "a/b"); err != nil || string(got) != "x" {
		t.Fatalf("Get after reopen = %q, %v", got, err)
	}
}

func TestOpenRefusesBadURLs(t *testing.T) {
	for url, want := range map[string]string{
		"":                   "no scheme",
		"/tmp/x":             "no scheme",
		"ftp://host/x":       `unsupported scheme "ftp"`,
		"file://relative":    "absolute directory",
		"s3:///nobucket":     "names no bucket",
		"file:///dev/null/x": "/dev/null",
	} {
		_, err := Open(context.Background(), url)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v; want an error containing %q", url, err, want)
		}
	}
}

func TestBadKeys(t *testing.T) {
	s := openFile(t)
	for _, k := range []string{"", "/abs", "a/../b", "a//b", "dir/", `a\b`, "a\nb", "./a"} {
		if err := s.Put(context.Background(), k, []byte("x")); err == nil || !strings.Contains(err.Error(), "blob key") {
			t.Errorf("Put(%q) = %v; want a blob key error", k, err)
		}
	}
}

func TestDevURL(t *testing.T) {
	u, err := DevURL("/var/lib/gf/state.db")
	if err != nil || u != "file:///var/lib/gf/state-blobs" {
		t.Fatalf("DevURL(file) = %q, %v", u, err)
	}
	u, err = DevURL("")
	if err != nil || !strings.HasPrefix(u, "file://") || !strings.HasSuffix(u, "gateflow-blobs") {
		t.Fatalf("DevURL(memory) = %q, %v", u, err)
	}
}

func TestStoreStreamsBigBlobsInBoundedMemory(t *testing.T) {
	s := openFile(t)
	ctx := context.Background()
	const size, chunk = 64 << 20, 32 << 10
	block := []byte(strings.Repeat("0123456789abcdef", chunk/16))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w, err := s.NewWriter(ctx, "outputs/big")
	if err != nil {
		t.Fatal(err)
	}
	for written := 0; written < size; written += chunk {
		if _, err := w.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := s.NewReader(ctx, "outputs/big")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, r, make([]byte, chunk))
	if err != nil || n != size {
		t.Fatalf("read back %d bytes, %v; want %d", n, err, size)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("writing and reading a %d-byte blob allocated %d bytes; want it streamed", size, alloc)
	}
	want := sha256.New()
	for range size / chunk {
		want.Write(block)
	}
	if !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatal("the blob read back differs from what was written")
	}
	if _, err := s.NewReader(ctx, "outputs/missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("NewReader of a missing key = %v; want ErrNotFound", err)
	}
	if _, err := s.NewWriter(ctx, "../escape"); err == nil {
		t.Fatal("NewWriter accepted a key with a .. part")
	}
}
