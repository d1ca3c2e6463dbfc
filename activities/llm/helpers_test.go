package llm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// received is one request a fake provider server got.
type received struct {
	Method, Path string
	Header       http.Header
	Body         string
}

// fakeServer is a real local HTTP server that answers every request with one canned
// response and records what it received.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

// newFakeServer starts a server answering status, headers and body.
func newFakeServer(t *testing.T, status int, headers map[string]string, body string) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, received{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: string(data)})
		f.mu.Unlock()
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(f.Close)
	return f
}

// only returns the one request received, failing the test if there was not exactly one.
func (f *fakeServer) only(t *testing.T) received {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) != 1 {
		t.Fatalf("server received %d requests, want 1", len(f.reqs))
	}
	return f.reqs[0]
}
