package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestHTTPTransportHeadersAndLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, r.Header.Get("Authorization"))
		if r.URL.Path == "/big" {
			_, _ = io.WriteString(w, strings.Repeat("\n1", 50))
		}
	}))
	defer srv.Close()
	var tripped atomic.Bool
	client := &http.Client{Transport: &httpTransport{
		base: http.DefaultTransport, headers: map[string]string{"Authorization": "Bearer t"},
		limit: 64, tripped: &tripped,
	}}
	get := func(path string) (string, error) {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	if body, err := get("/small"); err != nil || body != "Bearer t" || tripped.Load() {
		t.Errorf("small body %q, err %v, tripped %v: want the header echoed", body, err, tripped.Load())
	}
	if _, err := get("/big"); !errors.Is(err, ErrTooLarge) || !tripped.Load() {
		t.Errorf("big body: err %v, tripped %v, want ErrTooLarge (newlines do not split a JSON body)", err, tripped.Load())
	}
}

func TestContextDeadline(t *testing.T) {
	s, _ := stdioServer(t)
	p := newPool(t, Options{}, s)
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	// Before any session, and on a live one: a retryable *ServerError either way.
	for i := range 2 {
		_, err := p.CallTool(expired, "triage", "lookup_runbook", json.RawMessage(`{"service":"search"}`))
		if !errors.Is(err, context.DeadlineExceeded) || !IsRetryable(err) {
			t.Errorf("call %d with an expired context: %v, want a retryable deadline error", i, err)
		}
		call(t, p, "lookup_runbook", `{"service":"search"}`)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.ListTools(canceled, "triage"); !errors.Is(err, context.Canceled) || IsRetryable(err) {
		t.Errorf("a cancelled context: %v, want a non-retryable cancellation", err)
	}
}
