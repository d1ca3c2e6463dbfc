package gates

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// FuzzHTTPAnswer: the answer an "http" gate polls is outside input (any service's JSON,
// status and size). Poll never panics and never fails on an answer it got: it is approved
// only when the field holds an approve value, rejected only when it holds a reject value,
// and otherwise pending with a message; a message shows at most about 200 bytes of the
// field's value.
func FuzzHTTPAnswer(f *testing.F) {
	for _, s := range [][2]string{
		{`{"status":"success"}`, "status"}, {`{"status":"failure"}`, "status"}, {`{"checks":{"state":"success"}}`, "checks.state"},
		{`{"items":[{"state":"success"}]}`, "items.0.state"}, {`{"items":[]}`, "items.-1"}, {`{"status":1}`, "status"},
		{`not json`, "status"}, {`{"status":"` + string(make([]byte, 300)) + `"}`, "status"}, {`[1,2]`, "1"}, {`{"a":{"b":null}}`, "a.b"},
	} {
		f.Add([]byte(s[0]), s[1], uint16(200))
	}
	f.Add([]byte(`{"status":"success"}`), "status", uint16(503))
	var body atomic.Pointer[[]byte]
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write(*body.Load())
	}))
	f.Cleanup(srv.Close)
	h := HTTP{Client: srv.Client()}
	f.Fuzz(func(t *testing.T, answer []byte, field string, code uint16) {
		if code < 200 || code > 599 {
			code = 200
		}
		body.Store(&answer)
		status.Store(int32(code))
		params, _ := json.Marshal(HTTPParams{URL: srv.URL, Field: field, Equals: "success", ApproveValues: []any{float64(1)}, RejectValues: []any{"failure"}})
		p, err := h.Poll(context.Background(), Params{Type: HTTPType, Gate: "checks", RunID: "r", Poll: 1, Params: params})
		if err != nil {
			if _, bad := err.(*ParamsError); !bad || strings.TrimSpace(field) != "" {
				t.Fatalf("answer %q (status %d), field %q, failed the poll: %v", answer, code, field, err)
			}
			return
		}
		var doc any
		fieldValue, found := any(nil), false
		if code < 300 && json.Unmarshal(answer, &doc) == nil {
			fieldValue, found = lookup(doc, field)
		}
		switch p.State {
		case StateApproved:
			if !found || !matchesAny(fieldValue, []any{"success", float64(1)}) {
				t.Fatalf("answer %q field %q approved: %+v", answer, field, p)
			}
		case StateRejected:
			if !found || !matchesAny(fieldValue, []any{"failure"}) {
				t.Fatalf("answer %q field %q rejected: %+v", answer, field, p)
			}
		case StatePending:
			if p.Message == "" {
				t.Fatalf("answer %q field %q: pending without a message", answer, field)
			}
		default:
			t.Fatalf("answer %q: state %q", answer, p.State)
		}
		if len(p.Comment)+len(p.Reason) > 200+len(field)+64 {
			t.Fatalf("a %d-byte message for field %q", len(p.Comment)+len(p.Reason), field)
		}
	})
}
