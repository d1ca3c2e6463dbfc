package activities

import (
	"github.com/gateflow/gateflow/artifacts"

	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

func TestIdempotencyKey(t *testing.T) {
	k := IdempotencyKey("default", "wf", "run-1", "build")
	assert.Regexp(t, `^gf1-[0-9a-f]{32}$`, k)
	assert.Equal(t, k, IdempotencyKey("default", "wf", "run-1", "build"), "stable")
	for _, other := range []string{
		IdempotencyKey("other", "wf", "run-1", "build"),
		IdempotencyKey("default", "wf2", "run-1", "build"),
		IdempotencyKey("default", "wf", "run-2", "build"),
		IdempotencyKey("default", "wf", "run-1", "build#2"),
		// Lengths are part of the hash: moving a character between parts changes the key.
		IdempotencyKey("default", "wfr", "un-1", "build"),
	} {
		assert.NotEqual(t, k, other)
	}
	assert.NotContains(t, k, "wf", "the key shows none of its parts")
}

func TestShellValidateRefusesIdentityEnv(t *testing.T) {
	for _, name := range []string{EnvStep, EnvAttempt, EnvIdempotencyKey} {
		err := Shell{Command: "true", Env: map[string]string{name: "x"}}.Validate()
		require.Error(t, err)
		assert.Equal(t, "shell: environment variable "+name+" is set by the worker; use another name", err.Error())
	}
}

func TestHTTPValidateIdempotencyHeader(t *testing.T) {
	ok := "http://example.com/"
	assert.NoError(t, HTTP{URL: ok, IdempotencyHeader: "X-Request-Id"}.Validate())
	assert.NoError(t, HTTP{URL: ok, IdempotencyHeader: NoIdempotencyHeader}.Validate())
	assert.EqualError(t, HTTP{URL: ok, IdempotencyHeader: "Bad Name"}.Validate(),
		`http: idempotency_header "Bad Name" is not a valid header name (want a name like Idempotency-Key, or - for none)`)
	assert.EqualError(t, HTTP{URL: ok, IdempotencyHeader: "content-type"}.Validate(),
		"http: idempotency_header content-type: that header carries something else; name another")
}

func activityEnv(t *testing.T) *testsuite.TestActivityEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(RunShell, activity.RegisterOptions{Name: ShellActivity})
	env.RegisterActivityWithOptions(RunHTTP, activity.RegisterOptions{Name: HTTPActivity})
	return env
}

func TestRunShellGetsStepIdentity(t *testing.T) {
	env := activityEnv(t)
	val, err := env.ExecuteActivity(ShellActivity, Shell{
		Command: `echo "$GATEFLOW_STEP|$GATEFLOW_ATTEMPT|$GATEFLOW_IDEMPOTENCY_KEY|$OWN"`, Env: map[string]string{"OWN": "mine"}})
	require.NoError(t, err)
	var res ShellResult
	require.NoError(t, val.Get(&res))
	parts := strings.Split(strings.TrimSpace(res.Stdout), "|")
	require.Len(t, parts, 4, res.Stdout)
	assert.NotEmpty(t, parts[0], "GATEFLOW_STEP is the activity ID")
	assert.Equal(t, "1", parts[1])
	assert.Regexp(t, `^gf1-[0-9a-f]{32}$`, parts[2])
	assert.Equal(t, "mine", parts[3], "the step's own variables are kept")
}

func TestRunShellOutsideActivityHasNoIdentity(t *testing.T) {
	res, err := RunShell(t.Context(), Shell{Command: `echo "[$GATEFLOW_IDEMPOTENCY_KEY]"`})
	require.NoError(t, err)
	assert.Equal(t, "[]\n", res.Stdout)
}

func TestRunHTTPSendsIdempotencyKey(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
	}))
	defer srv.Close()
	env := activityEnv(t)
	for _, in := range []HTTP{
		{URL: srv.URL},
		{URL: srv.URL, IdempotencyHeader: "X-Request-Id"},
		{URL: srv.URL, IdempotencyHeader: NoIdempotencyHeader},
		{URL: srv.URL, Headers: map[string]string{"idempotency-key": "mine"}},
	} {
		_, err := env.ExecuteActivity(HTTPActivity, in)
		require.NoError(t, err)
	}
	require.Len(t, got, 4)
	key := got[0].Get("Idempotency-Key")
	assert.Regexp(t, `^gf1-[0-9a-f]{32}$`, key)
	assert.Regexp(t, `^gf1-[0-9a-f]{32}$`, got[1].Get("X-Request-Id"))
	assert.Empty(t, got[1].Get("Idempotency-Key"))
	assert.Empty(t, got[2].Get("Idempotency-Key"), "- sends none")
	assert.Equal(t, []string{"mine"}, got[3].Values("Idempotency-Key"), "the step's own header wins")
}

func TestRunHTTPOutsideActivitySendsNoKey(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() }))
	defer srv.Close()
	_, err := RunHTTP(t.Context(), HTTP{URL: srv.URL})
	require.NoError(t, err)
	assert.Empty(t, got.Get("Idempotency-Key"))
}

func TestLiveTail(t *testing.T) {
	tail := newLiveTail()
	out, errw := tail.writer("stdout"), tail.writer("stderr")
	_, _ = io.WriteString(out, "one\ntw")
	_, _ = io.WriteString(errw, "oops\r\n")
	_, _ = io.WriteString(out, "o\n\xff\n")
	snap := tail.snapshot(2)
	assert.Equal(t, 2, snap.Attempt)
	assert.Equal(t, []artifacts.LiveLine{
		{Seq: 1, Stream: "stdout", Text: "one"},
		{Seq: 2, Stream: "stderr", Text: "oops"},
		{Seq: 3, Stream: "stdout", Text: "two"},
		{Seq: 4, Stream: "stdout", Text: "\uFFFD"},
	}, snap.Lines)

	// Long lines are cut, and only the last LiveTailLines lines are kept.
	_, _ = io.WriteString(out, strings.Repeat("é", LiveLineBytes)) // 2 bytes each
	snap = tail.snapshot(1)
	assert.Equal(t, strings.Repeat("é", LiveLineBytes/2), snap.Lines[len(snap.Lines)-1].Text, "cut on a character boundary")
	_, _ = io.WriteString(out, strings.Repeat("x\n", 3*LiveTailLines))
	snap = tail.snapshot(1)
	require.Len(t, snap.Lines, LiveTailLines)
	last := snap.Lines[len(snap.Lines)-1]
	assert.Equal(t, int64(4+2+3*LiveTailLines), last.Seq, "sequence numbers go on")
	assert.Equal(t, "x", last.Text)

	// Long lines together stay under LiveTailBytes.
	_, _ = io.WriteString(out, strings.Repeat(strings.Repeat("y", LiveLineBytes-1)+"\n", LiveTailLines))
	snap = tail.snapshot(1)
	total := 0
	for _, l := range snap.Lines {
		total += len(l.Text)
	}
	assert.LessOrEqual(t, total, LiveTailBytes)
	assert.Greater(t, total, LiveTailBytes-LiveLineBytes)
	assert.Equal(t, int64(4+2+4*LiveTailLines), snap.Lines[len(snap.Lines)-1].Seq)
}

func TestRunShellHeartbeatsLiveOutput(t *testing.T) {
	env := activityEnv(t)
	var mu sync.Mutex
	var beats []artifacts.LiveOutput
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var lo artifacts.LiveOutput
		if d.HasValues() && d.Get(&lo) == nil {
			mu.Lock()
			beats = append(beats, lo)
			mu.Unlock()
		}
	})
	_, err := env.ExecuteActivity(ShellActivity, Shell{Command: "echo first; echo warn >&2; sleep 1.5; echo second"})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, beats, "a running step heartbeats its output")
	// stdout and stderr are separate pipes: which line the worker reads first is not fixed.
	lines := beats[0].Lines
	require.Len(t, lines, 2, "%v", lines)
	assert.ElementsMatch(t, []artifacts.LiveLine{{Stream: "stdout", Text: "first"}, {Stream: "stderr", Text: "warn"}},
		[]artifacts.LiveLine{{Stream: lines[0].Stream, Text: lines[0].Text}, {Stream: lines[1].Stream, Text: lines[1].Text}})
	assert.Equal(t, []int64{1, 2}, []int64{int64(lines[0].Seq), int64(lines[1].Seq)}, "lines are numbered in the order read")
	assert.Equal(t, 1, beats[0].Attempt)
}

func TestRunAgentHeartbeatsProgress(t *testing.T) {
	srv := newAgentFakeProvider(t, http.StatusOK, nil, agentOpenAIAnswer("ok", 1, 1, ""), 1300*time.Millisecond)
	a := agentOpenAIActivities(srv, "k")
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.RunAgent, activity.RegisterOptions{Name: AgentActivity})
	var mu sync.Mutex
	var beats []artifacts.LiveOutput
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var lo artifacts.LiveOutput
		if d.HasValues() && d.Get(&lo) == nil {
			mu.Lock()
			beats = append(beats, lo)
			mu.Unlock()
		}
	})
	_, err := env.ExecuteActivity(AgentActivity, Agent{Model: "gpt-4o-mini", Prompt: "review"})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, beats, "a waiting agent step heartbeats its progress")
	assert.Equal(t, "waiting for provider openai (model gpt-4o-mini), 1s", beats[0].Progress)
	assert.Empty(t, beats[0].Lines)
}
