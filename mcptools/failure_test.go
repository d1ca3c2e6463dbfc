package mcptools

import (
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitFor waits until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitGone waits until pid no longer exists (it was killed and reaped).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	waitFor(t, "the process to be gone", func() bool { return syscall.Kill(pid, 0) != nil })
}

func TestStdioServerDiesAndReconnects(t *testing.T) {
	s, count := stdioServer(t)
	p := newPool(t, Options{}, s)
	call(t, p, "lookup_runbook", `{"service":"checkout"}`)
	first := p.pid("triage")
	if first == 0 {
		t.Fatal("no process")
	}
	// Killed between calls: the next call starts a new process.
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pool to see the process exit", func() bool { return p.current("triage").dead() })
	if res := call(t, p, "lookup_runbook", `{"service":"search"}`); !strings.HasPrefix(res.Text, "# search") {
		t.Errorf("after the restart: %+v", res)
	}
	second := p.pid("triage")
	if second == 0 || second == first {
		t.Fatalf("pid %d after the restart, was %d", second, first)
	}
	// Killed just before a call: that call either reconnects or fails with a retryable
	// *ServerError; the one after works.
	if err := syscall.Kill(second, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CallTool(testContext(t), "triage", "lookup_runbook", json.RawMessage(`{"service":"search"}`)); err != nil {
		if se := (*ServerError)(nil); !errors.As(err, &se) || !se.Retryable {
			t.Fatalf("call to a killed server: %v, want a retryable *ServerError", err)
		}
	}
	call(t, p, "recent_deploys", `{"service":"search"}`)
	got := countLines(t, count)
	if got[0] != "lookup_runbook checkout" || got[1] != "lookup_runbook search" || got[len(got)-1] != "recent_deploys search" {
		t.Errorf("calls counted: %q", got)
	}
}

func TestConnectFailures(t *testing.T) {
	p := newPool(t, Options{StopGrace: 100 * time.Millisecond},
		Server{Name: "missing", Command: []string{"/nonexistent/triage-tools"}},
		Server{Name: "crashes", Command: []string{"sh", "-c", "echo boom >&2; exit 3"}},
		Server{Name: "unreachable", URL: "http://127.0.0.1:1/mcp"},
	)
	for _, name := range []string{"missing", "crashes", "unreachable"} {
		_, err := p.ListTools(testContext(t), name)
		se := (*ServerError)(nil)
		if !errors.As(err, &se) || se.Op != "connect" || !se.Retryable || se.Server != name {
			t.Errorf("%s: %v, want a retryable connect *ServerError", name, err)
		}
	}
	_, err := p.ListTools(testContext(t), "crashes")
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a server that exits at once: %v, want its stderr in the error", err)
	}
	_, err = p.CallTool(testContext(t), "nope", "x", nil)
	if !errors.Is(err, ErrUnknownServer) || IsRetryable(err) {
		t.Errorf("unknown server: %v", err)
	}
}

func TestCloseStopsProcesses(t *testing.T) {
	s, _ := stdioServer(t)
	p := newPool(t, Options{}, s)
	call(t, p, "lookup_runbook", `{"service":"checkout"}`)
	pid := p.pid("triage")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	_, err := p.ListTools(testContext(t), "triage")
	if !errors.Is(err, ErrClosed) || IsRetryable(err) {
		t.Errorf("after Close: %v", err)
	}
}

func TestResultLimits(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s, _ := tr.declare(t)
			// Results over MaxResultBytes are cut with a marker.
			p := newPool(t, Options{MaxResultBytes: 200}, s)
			res := call(t, p, "lookup_runbook", `{"service":"payments"}`)
			body, marker, ok := strings.Cut(res.Text, "\n…[cut: ")
			if !res.Truncated || !ok || len(body) > 200 || !strings.Contains(marker, "over the 200-byte limit]") {
				t.Errorf("a long runbook: %d bytes, truncated %v: %q", len(res.Text), res.Truncated, res.Text)
			}
			res = call(t, p, "recent_deploys", `{"service":"payments","limit":5}`)
			if !res.Truncated || res.Structured != nil || !strings.Contains(res.Text, "structured content of") {
				t.Errorf("long structured content: %+v", res)
			}
			rc, err := p.ReadResource(testContext(t), "triage", "runbook://payments")
			if err != nil || !rc.Truncated || len(rc.Text) > 300 {
				t.Errorf("a long resource: %+v, %v", rc, err)
			}
			// A message over MaxMessageBytes is refused; the next call reconnects.
			small := newPool(t, Options{MaxMessageBytes: 1024}, s)
			_, err = small.CallTool(testContext(t), "triage", "lookup_runbook", json.RawMessage(`{"service":"payments"}`))
			if !errors.Is(err, ErrTooLarge) || IsRetryable(err) {
				t.Fatalf("an over-limit message: %v, want ErrTooLarge, not retryable", err)
			}
			if res, err := small.CallTool(testContext(t), "triage", "lookup_runbook", json.RawMessage(`{"service":"search"}`)); err != nil || res.IsError {
				t.Errorf("the call after an over-limit message: %+v, %v", res, err)
			}
		})
	}
}
