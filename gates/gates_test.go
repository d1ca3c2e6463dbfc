package gates_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/gates"
)

func params(t *testing.T, typ string, v any) gates.Params {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return gates.Params{Type: typ, Gate: "g", RunID: "run-1", Poll: 1, Params: raw}
}

func TestRequestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  gates.Request
		err  string
		want func(t *testing.T, r gates.Request)
	}{
		{name: "defaults", req: gates.Request{Type: " http "}, want: func(t *testing.T, r gates.Request) {
			assert.Equal(t, "http", r.Type)
			assert.Equal(t, gates.DefaultPollInterval, r.PollInterval)
			assert.Equal(t, gates.DefaultPollTimeout, r.PollTimeout)
			assert.Equal(t, gates.FailOnTimeout, r.OnTimeout)
			assert.Equal(t, json.RawMessage("null"), r.Params)
		}},
		{name: "struct params become a JSON object", req: gates.Request{Type: "http", Params: gates.HTTPParams{URL: "http://x", Field: "s", Equals: "ok"}},
			want: func(t *testing.T, r gates.Request) {
				assert.JSONEq(t, `{"url":"http://x","field":"s","equals":"ok"}`, string(r.Params.(json.RawMessage)))
			}},
		{name: "empty type", req: gates.Request{Type: "  "}, err: "the gate type is empty"},
		{name: "negative interval", req: gates.Request{Type: "http", PollInterval: -time.Second}, err: "poll interval is -1s"},
		{name: "interval below the minimum", req: gates.Request{Type: "http", PollInterval: 500 * time.Millisecond}, err: "poll interval is 500ms; the minimum is 1s"},
		{name: "negative poll timeout", req: gates.Request{Type: "http", PollTimeout: -1}, err: "poll timeout is -1ns"},
		{name: "negative timeout", req: gates.Request{Type: "http", Timeout: -time.Minute}, err: "timeout is -1m0s; want 0 (no deadline) or more"},
		{name: "too many polls", req: gates.Request{Type: "http", PollInterval: time.Second, Timeout: 24 * time.Hour}, err: "is 86400 polls; the limit is 2000"},
		{name: "unknown on_timeout", req: gates.Request{Type: "http", OnTimeout: "shrug"}, err: `on_timeout "shrug" is not one of fail, approve, reject or continue`},
		{name: "array params", req: gates.Request{Type: "http", Params: []string{"a"}}, err: "params must be a JSON object, not an array"},
		{name: "raw invalid params", req: gates.Request{Type: "http", Params: json.RawMessage(`{"a":`)}, err: "params are not valid JSON"},
		{name: "params that do not encode", req: gates.Request{Type: "http", Params: map[string]any{"f": func() {}}}, err: "params cannot be encoded as JSON"},
		{name: "params too large", req: gates.Request{Type: "http", Params: map[string]string{"x": strings.Repeat("a", gates.MaxParamsLen)}}, err: "the limit is 8192"},
		{name: "every on_timeout", req: gates.Request{Type: "c", OnTimeout: gates.ContinueOnTimeout, Timeout: time.Minute, PollInterval: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.req.Normalize()
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			if tc.want != nil {
				tc.want(t, got)
			}
		})
	}
}

func TestRegistryRefusesEmptyAndDuplicateTypes(t *testing.T) {
	reg, err := gates.Registry(nil)
	require.NoError(t, err)
	assert.Len(t, reg, 2)
	assert.NotNil(t, reg["http"])
	assert.NotNil(t, reg["command"])

	_, err = gates.Registry([]gates.Resolver{fake{"jira"}, fake{""}, fake{"jira"}, fake{"http"}, nil})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `gates_test.fake has an empty type`)
	assert.Contains(t, err.Error(), `gate resolver type "jira" is registered twice`)
	assert.Contains(t, err.Error(), `gate resolver type "http" is registered twice (http is built in)`)
	assert.Contains(t, err.Error(), `gate resolver 4 is nil`)
}

type fake struct{ t string }

func (f fake) Type() string { return f.t }
func (fake) Poll(context.Context, gates.Params) (gates.Poll, error) {
	return gates.Pending(""), nil
}

func TestResultAndErrorsRead(t *testing.T) {
	r := gates.Result{Outcome: gates.OutcomeRejected, By: "alice", Manual: true, Reason: "not today", Polls: 1}
	err := error(&gates.RejectedError{Gate: "ci", Result: r})
	assert.EqualError(t, err, "gate ci: rejected by alice (manual) after 1 poll: not today")
	assert.True(t, errors.Is(err, gates.ErrRejected))
	to := error(&gates.TimedOutError{Gate: "ci", Timeout: time.Minute, Result: gates.Result{Outcome: gates.OutcomeTimedOut, By: gates.TimeoutActor, Polls: 4, Message: "running"}})
	assert.EqualError(t, to, "gate ci: timed out after 1m0s (4 polls) without a decision; last poll: running")
	assert.True(t, errors.Is(to, gates.ErrTimedOut))
	assert.Equal(t, "approved at the deadline after 2 polls", gates.Result{Outcome: gates.OutcomeApproved, By: gates.TimeoutActor, Polls: 2}.Describe())
}

func TestPollValidateAndClip(t *testing.T) {
	assert.NoError(t, gates.Approved("x").Validate())
	assert.EqualError(t, gates.Poll{State: "maybe"}.Validate(), `poll state "maybe" is not one of pending, approved or rejected`)
	long := gates.Pending(strings.Repeat("é", gates.MaxTextLen)).Clip()
	assert.LessOrEqual(t, len(long.Message), gates.MaxTextLen)
	assert.True(t, strings.HasSuffix(long.Message, "…"))
}

func TestParamsDecodeRefusesUnknownFields(t *testing.T) {
	var in gates.HTTPParams
	err := gates.Params{Type: "http", Params: json.RawMessage(`{"url":"http://x","feild":"s"}`)}.Decode(&in)
	var pe *gates.ParamsError
	require.True(t, errors.As(err, &pe), "got %v", err)
	assert.Contains(t, err.Error(), `gate http: bad params: json: unknown field "feild"`)
	assert.NoError(t, gates.Params{Params: json.RawMessage("null")}.Decode(&in))
}

func TestHTTPResolverReadsTheField(t *testing.T) {
	var state atomic.Value
	state.Store(`{"checks":{"state":"running"},"items":[{"n":1}]}`)
	var status atomic.Int32
	status.Store(200)
	var gotAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth.Store(r.Header.Get("Authorization") + " " + r.Method)
		w.WriteHeader(int(status.Load()))
		fmt.Fprint(w, state.Load().(string))
	}))
	defer srv.Close()
	h := gates.HTTP{}
	ctx := context.Background()
	p := params(t, "http", gates.HTTPParams{URL: srv.URL, Field: "checks.state", Equals: "success",
		RejectValues: []any{"failure"}, Headers: map[string]string{"Authorization": "Bearer t"}})

	poll, err := h.Poll(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, gates.Pending(`checks.state is "running"`), poll)
	assert.Equal(t, "Bearer t GET", gotAuth.Load())

	state.Store(`{"checks":{"state":"success"}}`)
	poll, err = h.Poll(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, gates.Approved(`checks.state is "success"`), poll)

	state.Store(`{"checks":{"state":"failure"}}`)
	poll, err = h.Poll(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, gates.Rejected(`checks.state is "failure"`), poll)

	// Answers that do not say are pending, with why.
	state.Store(`{"checks":{}}`)
	poll, err = h.Poll(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, gates.StatePending, poll.State)
	assert.Contains(t, poll.Message, "the answer has no field checks.state")
	state.Store(`<html>`)
	poll, err = h.Poll(ctx, p)
	require.NoError(t, err)
	assert.Contains(t, poll.Message, "the answer is not JSON")
	status.Store(503)
	poll, err = h.Poll(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, gates.Pending("GET "+srv.URL+" answered 503 Service Unavailable"), poll)

	// Numbers, booleans, array indexes and string spellings of them.
	status.Store(200)
	state.Store(`{"items":[{"n":2.0}],"ok":true}`)
	poll, err = h.Poll(ctx, params(t, "http", gates.HTTPParams{URL: srv.URL, Field: "items.0.n", ApproveValues: []any{1, 2}}))
	require.NoError(t, err)
	assert.Equal(t, gates.StateApproved, poll.State)
	poll, err = h.Poll(ctx, params(t, "http", gates.HTTPParams{URL: srv.URL, Field: "ok", Equals: "true"}))
	require.NoError(t, err)
	assert.Equal(t, gates.StateApproved, poll.State)
}

func TestHTTPResolverErrors(t *testing.T) {
	h := gates.HTTP{}
	for _, tc := range []struct {
		p   gates.HTTPParams
		err string
	}{
		{gates.HTTPParams{Field: "s", Equals: "x"}, "url is empty"},
		{gates.HTTPParams{URL: "ftp://x", Field: "s", Equals: "x"}, `url "ftp://x" is not http or https`},
		{gates.HTTPParams{URL: "http://x"}, "field is empty"},
		{gates.HTTPParams{URL: "http://x", Field: "s"}, "no approve value"},
	} {
		_, err := h.Poll(context.Background(), params(t, "http", tc.p))
		var pe *gates.ParamsError
		require.True(t, errors.As(err, &pe), "%+v: got %v", tc.p, err)
		assert.Contains(t, err.Error(), tc.err)
	}
	// No answer at all is a failed poll, not a params error.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := h.Poll(context.Background(), params(t, "http", gates.HTTPParams{URL: url, Field: "s", Equals: "x"}))
	require.Error(t, err)
	var pe *gates.ParamsError
	assert.False(t, errors.As(err, &pe))
	assert.Contains(t, err.Error(), "connection refused")
}

func TestCommandResolverExitCodes(t *testing.T) {
	c := gates.Command{}
	ctx := context.Background()
	poll, err := c.Poll(ctx, params(t, "command", gates.CommandParams{Command: `echo "gate $GATEFLOW_GATE poll $GATEFLOW_POLL of $GATEFLOW_RUN_ID"`}))
	require.NoError(t, err)
	assert.Equal(t, gates.Approved("gate g poll 1 of run-1"), poll)

	poll, err = c.Poll(ctx, params(t, "command", gates.CommandParams{Command: "echo still building; exit 3"}))
	require.NoError(t, err)
	assert.Equal(t, gates.Pending("still building"), poll)

	poll, err = c.Poll(ctx, params(t, "command", gates.CommandParams{Command: "echo nope >&2; exit 1"}))
	require.NoError(t, err)
	assert.Equal(t, gates.Rejected("exit code 1: nope"), poll)

	seven := 7
	poll, err = c.Poll(ctx, params(t, "command", gates.CommandParams{Command: "exit 7", PendingExit: &seven}))
	require.NoError(t, err)
	assert.Equal(t, gates.Pending(""), poll)
	poll, err = c.Poll(ctx, params(t, "command", gates.CommandParams{Command: "exit 3", PendingExit: &seven}))
	require.NoError(t, err)
	assert.Equal(t, gates.Rejected("exit code 3"), poll)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "flag"), []byte("ready"), 0o600))
	poll, err = c.Poll(ctx, params(t, "command", gates.CommandParams{Command: `cat flag; echo " $X"`, Dir: dir, Env: map[string]string{"X": "y"}}))
	require.NoError(t, err)
	assert.Equal(t, gates.Approved("ready y"), poll)
}

func TestCommandResolverParamsAndCancellation(t *testing.T) {
	c := gates.Command{}
	zero := 0
	for _, tc := range []struct {
		p   gates.CommandParams
		err string
	}{
		{gates.CommandParams{}, "command is empty"},
		{gates.CommandParams{Command: "true", PendingExit: &zero}, "pending_exit is 0"},
		{gates.CommandParams{Command: "true", Dir: "/no/such/dir"}, `dir "/no/such/dir" is not a directory`},
	} {
		_, err := c.Poll(context.Background(), params(t, "command", tc.p))
		var pe *gates.ParamsError
		require.True(t, errors.As(err, &pe), "%+v: got %v", tc.p, err)
		assert.Contains(t, err.Error(), tc.err)
	}

	// Cancelling the poll kills the whole process group, background children included.
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Poll(ctx, params(t, "command", gates.CommandParams{Command: `sleep 30 & echo $! > "$PIDFILE"; wait`, Env: map[string]string{"PIDFILE": pidFile}}))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second)
	raw, rerr := os.ReadFile(pidFile)
	require.NoError(t, rerr)
	pid, perr := strconv.Atoi(strings.TrimSpace(string(raw)))
	require.NoError(t, perr)
	assert.Eventually(t, func() bool {
		// Signal 0 probes the process; the killed sleeper is gone (or a zombie reaped by init).
		p, _ := os.FindProcess(pid)
		return p.Signal(syscallZero) != nil || isZombie(pid)
	}, 5*time.Second, 50*time.Millisecond, "the background sleep was killed")
}
