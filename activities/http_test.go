package activities

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/proto"
)

// httpSeenRequest is what an echo server received.
type httpSeenRequest struct {
	Method      string
	Path        string
	Host        string
	Body        string
	ContentType string
	Header      http.Header
}

// httpEchoServer starts a server that records each request and answers with status, the
// given headers and body.
func httpEchoServer(t *testing.T, status int, header map[string]string, body string) (*httptest.Server, *atomic.Pointer[httpSeenRequest]) {
	t.Helper()
	var seen atomic.Pointer[httpSeenRequest]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.Store(&httpSeenRequest{Method: r.Method, Path: r.URL.RequestURI(), Host: r.Host, Body: string(b),
			ContentType: r.Header.Get("Content-Type"), Header: r.Header.Clone()})
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

// httpRequireAppError asserts err is a *temporal.ApplicationError of type typ and returns it.
func httpRequireAppError(t *testing.T, err error, typ string) *temporal.ApplicationError {
	t.Helper()
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %T: %v", err, err)
	require.Equal(t, typ, app.Type(), "message: %s", app.Message())
	return app
}

func TestHTTPValidate(t *testing.T) {
	ok := "http://example.com/path"
	tests := []struct {
		name    string
		in      HTTP
		wantErr string
	}{
		{"minimal", HTTP{URL: ok}, ""},
		{"https with everything", HTTP{Method: "POST", URL: "https://example.com:8443/a?b=c",
			Headers: map[string]string{"Authorization": "Bearer " + Secret("API_TOKEN"), "X-Trace": "1"},
			JSON:    json.RawMessage(`{"a":1}`), Timeout: time.Second, ExpectStatus: []int{200, 201}}, ""},
		{"lower-case method", HTTP{Method: "get", URL: ok}, ""},
		{"extension method", HTTP{Method: "PROPFIND", URL: ok}, ""},
		{"body only", HTTP{Method: "PUT", URL: ok, Body: "x"}, ""},
		{"expect status bounds", HTTP{URL: ok, ExpectStatus: []int{100, 599}}, ""},
		{"two placeholders", HTTP{URL: ok, Headers: map[string]string{"X-Creds": Secret("U") + ":" + Secret("P_2")}}, ""},

		{"empty url", HTTP{}, "http: url is empty"},
		{"blank url", HTTP{URL: "  "}, "http: url is empty"},
		{"unparsable url", HTTP{URL: "http://exa mple.com/"}, `http: url is invalid: invalid character " " in host name`},
		{"control character in url", HTTP{URL: "http://example.com/\x7f?token=s3cr3t"}, "http: url is invalid: net/url: invalid control character in URL"},
		{"no scheme", HTTP{URL: "example.com/path"}, "http: url example.com/path: scheme must be http or https"},
		{"host:port without scheme", HTTP{URL: "localhost:8080"}, "http: url localhost:8080: scheme must be http or https"},
		{"ftp scheme", HTTP{URL: "ftp://example.com/f"}, "http: url ftp://example.com/f: scheme must be http or https"},
		{"bad scheme message is redacted", HTTP{URL: "ftp://u:pw@example.com/f?api_key=s3cr3t"}, "http: url ftp://u:[redacted]@example.com/f?api_key=[redacted]: scheme must be http or https"},
		{"no host", HTTP{URL: "http:///path"}, "http: url http:///path has no host"},
		{"placeholder in url", HTTP{URL: "http://example.com/?key=" + Secret("K")}, "http: url holds a secret placeholder; placeholders are only resolved in header values"},
		{"method with space", HTTP{Method: "GET ", URL: ok}, `http: method "GET " is invalid`},
		{"method with slash", HTTP{Method: "GE/T", URL: ok}, `http: method "GE/T" is invalid`},
		{"body and json", HTTP{URL: ok, Body: "x", JSON: json.RawMessage(`{}`)}, "http: both body and json are set; use one"},
		{"invalid json", HTTP{URL: ok, JSON: json.RawMessage(`{"a":`)}, "http: json is not valid JSON"},
		{"placeholder in body", HTTP{URL: ok, Body: "token=" + Secret("T")}, "http: body holds a secret placeholder; placeholders are only resolved in header values"},
		{"negative timeout", HTTP{URL: ok, Timeout: -time.Second}, "http: timeout -1s is negative"},
		{"empty header name", HTTP{URL: ok, Headers: map[string]string{"": "x"}}, `http: header name "" is invalid`},
		{"header name with space", HTTP{URL: ok, Headers: map[string]string{"X Trace": "x"}}, `http: header name "X Trace" is invalid`},
		{"header name with colon", HTTP{URL: ok, Headers: map[string]string{"X-A:": "x"}}, `http: header name "X-A:" is invalid`},
		{"header value with newline", HTTP{URL: ok, Headers: map[string]string{"X-A": "a\r\nX-Injected: 1"}}, "http: header X-A has a line break or NUL in its value"},
		{"headers differing in case", HTTP{URL: ok, Headers: map[string]string{"X-A": "1", "x-a": "2"}}, `http: headers "X-A" and "x-a" differ only in case`},
		{"content-length header", HTTP{URL: ok, Headers: map[string]string{"content-length": "3"}}, "http: header content-length is set from the body; remove it"},
		{"malformed placeholder", HTTP{URL: ok, Headers: map[string]string{"Authorization": "Bearer ${secret:API-TOKEN}"}},
			"http: header Authorization: malformed secret placeholder; want ${secret:NAME} with NAME made of letters, digits and _ (see activities.Secret)"},
		{"empty placeholder", HTTP{URL: ok, Headers: map[string]string{"X-Key": Secret("")}},
			"http: header X-Key: malformed secret placeholder; want ${secret:NAME} with NAME made of letters, digits and _ (see activities.Secret)"},
		{"expect status too low", HTTP{URL: ok, ExpectStatus: []int{200, 99}}, "http: expect_status 99 is out of range 100..599"},
		{"expect status too high", HTTP{URL: ok, ExpectStatus: []int{600}}, "http: expect_status 600 is out of range 100..599"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertValidation(t, tt.in.Validate(), tt.wantErr) })
	}
}

func TestRunHTTPRefusesInvalidStep(t *testing.T) {
	tests := []struct {
		name    string
		in      HTTP
		wantMsg string
	}{
		{"empty url", HTTP{}, "http: url is empty"},
		{"bad scheme", HTTP{URL: "file:///etc/passwd"}, "http: url file:///etc/passwd: scheme must be http or https"},
		{"body and json", HTTP{URL: "http://127.0.0.1/", Body: "a", JSON: json.RawMessage(`1`)}, "http: both body and json are set; use one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunHTTP(context.Background(), tt.in)
			app := httpRequireAppError(t, err, InvalidStepErrorType)
			assert.True(t, app.NonRetryable())
			assert.Equal(t, tt.wantMsg, app.Message())
			assert.Equal(t, HTTPResult{}, res)
		})
	}
}

func TestRunHTTPMethodsAndBodies(t *testing.T) {
	tests := []struct {
		name            string
		in              HTTP
		wantMethod      string
		wantBody        string
		wantContentType string
		wantHost        string
	}{
		{name: "GET by default", in: HTTP{}, wantMethod: "GET"},
		{name: "lower-case method is sent upper-case", in: HTTP{Method: "delete"}, wantMethod: "DELETE"},
		{name: "POST body as is", in: HTTP{Method: "POST", Body: "a=1&b=2", Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
			wantMethod: "POST", wantBody: "a=1&b=2", wantContentType: "application/x-www-form-urlencoded"},
		{name: "POST body without content type", in: HTTP{Method: "POST", Body: "raw bytes\n"}, wantMethod: "POST", wantBody: "raw bytes\n"},
		{name: "PUT JSON", in: HTTP{Method: "PUT", JSON: json.RawMessage(`{"name":"gate","n":[1,2]}`)},
			wantMethod: "PUT", wantBody: `{"name":"gate","n":[1,2]}`, wantContentType: "application/json"},
		{name: "PATCH JSON with its own content type", in: HTTP{Method: "PATCH", JSON: json.RawMessage(`{"a":null}`),
			Headers: map[string]string{"content-type": "application/merge-patch+json"}},
			wantMethod: "PATCH", wantBody: `{"a":null}`, wantContentType: "application/merge-patch+json"},
		{name: "Host header", in: HTTP{Headers: map[string]string{"Host": "api.internal"}}, wantMethod: "GET", wantHost: "api.internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, seen := httpEchoServer(t, http.StatusOK, map[string]string{"Content-Type": "text/plain"}, "fine")
			in := tt.in
			in.URL = srv.URL + "/items/7?x=1"
			if in.Headers == nil {
				in.Headers = map[string]string{}
			}
			in.Headers["X-Request-Id"] = "abc"

			res, err := RunHTTP(context.Background(), in)
			require.NoError(t, err)
			assert.Equal(t, 200, res.Status)
			assert.Equal(t, "fine", res.Body)
			assert.Nil(t, res.JSON)
			assert.Equal(t, 1, res.Attempt, "outside an activity the attempt is 1")
			assert.Greater(t, res.Duration, time.Duration(0))
			assert.Equal(t, []string{"text/plain"}, res.Headers["Content-Type"])

			got := seen.Load()
			require.NotNil(t, got)
			assert.Equal(t, tt.wantMethod, got.Method)
			assert.Equal(t, "/items/7?x=1", got.Path)
			assert.Equal(t, tt.wantBody, got.Body)
			assert.Equal(t, tt.wantContentType, got.ContentType)
			assert.Equal(t, "abc", got.Header.Get("X-Request-Id"))
			assert.Equal(t, "gateflow", got.Header.Get("User-Agent"))
			if tt.wantHost != "" {
				assert.Equal(t, tt.wantHost, got.Host)
			}
		})
	}
}

func TestRunHTTPResponseJSON(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        string
		wantJSON    string // "" means no JSON
	}{
		{"application/json", "application/json", `{"ok":true,"n":[1,2]}`, `{"ok":true,"n":[1,2]}`},
		{"with charset", "application/json; charset=utf-8", `[1, 2]`, `[1, 2]`},
		{"+json type", "application/problem+json", `{"title":"nope"}`, `{"title":"nope"}`},
		{"upper case type", "Application/JSON", `"s"`, `"s"`},
		{"json text as text/plain is left alone", "text/plain", `{"ok":true}`, ""},
		{"invalid json is left alone", "application/json", `{"ok":`, ""},
		{"empty json body", "application/json", ``, ""},
		{"html", "text/html", `<p>hi</p>`, ""},
		{"no content type header value", "", `{"a":1}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{tt.contentType} // no sniffing
				_, _ = io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			res, err := RunHTTP(context.Background(), HTTP{URL: srv.URL})
			require.NoError(t, err)
			assert.Equal(t, tt.body, res.Body, "the body is always kept as text")
			if tt.wantJSON == "" {
				assert.Nil(t, res.JSON)
			} else {
				assert.Equal(t, tt.wantJSON, string(res.JSON))
			}
			// The result survives Temporal's JSON converter.
			p, err := converter.GetDefaultDataConverter().ToPayload(res)
			require.NoError(t, err)
			var back HTTPResult
			require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &back))
			assert.Equal(t, res.Body, back.Body)
		})
	}
}

func TestRunHTTPExpectStatus(t *testing.T) {
	tests := []struct {
		name   string
		status int
		expect []int
		wantOK bool
	}{
		{"200 by default", 200, nil, true},
		{"204 by default", 204, nil, true},
		{"299 by default", 299, nil, true},
		{"404 expected", 404, []int{404}, true},
		{"one of several", 202, []int{200, 202}, true},
		{"200 when only 201 is expected", 200, []int{201}, false},
		{"302 not followed without Location is not 2xx", 302, nil, false},
		{"500 by default", 500, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := httpEchoServer(t, tt.status, nil, "")
			res, err := RunHTTP(context.Background(), HTTP{URL: srv.URL, ExpectStatus: tt.expect})
			assert.Equal(t, tt.status, res.Status)
			if tt.wantOK {
				assert.NoError(t, err)
				return
			}
			app := httpRequireAppError(t, err, HTTPStatusErrorType)
			var f HTTPFailure
			require.NoError(t, app.Details(&f))
			assert.Equal(t, tt.status, f.Status)
		})
	}
}

func TestRunHTTPFollowsRedirects(t *testing.T) {
	final, seen := httpEchoServer(t, http.StatusOK, nil, "landed")
	redir := httptest.NewServer(http.RedirectHandler(final.URL+"/there", http.StatusFound))
	defer redir.Close()
	res, err := RunHTTP(context.Background(), HTTP{URL: redir.URL + "/here"})
	require.NoError(t, err)
	assert.Equal(t, "landed", res.Body)
	assert.Equal(t, "/there", seen.Load().Path)
}

func TestRunHTTPStatusErrors(t *testing.T) {
	longBody := strings.Repeat("line of text\n", 100) // 1300 bytes, many lines
	tests := []struct {
		name             string
		method           string
		status           int
		header           map[string]string
		body             string
		wantMsg          string // after the "METHOD URL: " prefix
		wantNonRetryable bool
		wantDelay        time.Duration
		wantDelayAbout   time.Duration // for HTTP dates: within 3s below this
		wantTail         string
	}{
		{name: "404 is not retried", status: 404, body: "no such thing",
			wantMsg: "status 404 Not Found: no such thing", wantNonRetryable: true, wantTail: "no such thing"},
		{name: "400 without body", method: "POST", status: 400,
			wantMsg: "status 400 Bad Request", wantNonRetryable: true},
		{name: "401", status: 401, body: `{"error":"unauthorized"}`,
			wantMsg: `status 401 Unauthorized: {"error":"unauthorized"}`, wantNonRetryable: true, wantTail: `{"error":"unauthorized"}`},
		{name: "408 is retried", status: 408, wantMsg: "status 408 Request Timeout"},
		{name: "429 without Retry-After", status: 429, wantMsg: "status 429 Too Many Requests"},
		{name: "429 with Retry-After seconds", status: 429, header: map[string]string{"Retry-After": "2"},
			wantMsg: "status 429 Too Many Requests", wantDelay: 2 * time.Second},
		{name: "503 with Retry-After date", status: 503,
			header:  map[string]string{"Retry-After": time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)},
			body:    "down for maintenance\n",
			wantMsg: "status 503 Service Unavailable: down for maintenance", wantDelayAbout: 90 * time.Second, wantTail: "down for maintenance"},
		{name: "503 with a long Retry-After is capped", status: 503, header: map[string]string{"Retry-After": "86400"},
			wantMsg: "status 503 Service Unavailable", wantDelay: MaxRetryAfter},
		{name: "500 ignores Retry-After", status: 500, header: map[string]string{"Retry-After": "5"}, body: "boom",
			wantMsg: "status 500 Internal Server Error: boom", wantTail: "boom"},
		{name: "long body is one line of 512 bytes", status: 502, body: longBody,
			wantMsg:  "status 502 Bad Gateway: " + strings.Repeat("line of text ", 40)[:512] + "…",
			wantTail: Tail(longBody, StderrTailBytes)},
		{name: "non-standard status", status: 599, body: "odd", wantMsg: "status 599: odd", wantTail: "odd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := httpEchoServer(t, tt.status, tt.header, tt.body)
			method := tt.method
			if method == "" {
				method = "GET"
			}
			res, err := RunHTTP(context.Background(), HTTP{Method: method, URL: srv.URL + "/api/v1"})
			app := httpRequireAppError(t, err, HTTPStatusErrorType)
			assert.Equal(t, method+" "+srv.URL+"/api/v1: "+tt.wantMsg, app.Message())
			assert.Equal(t, tt.wantNonRetryable, app.NonRetryable())
			if tt.wantDelayAbout > 0 {
				assert.LessOrEqual(t, app.NextRetryDelay(), tt.wantDelayAbout)
				assert.Greater(t, app.NextRetryDelay(), tt.wantDelayAbout-3*time.Second)
			} else {
				assert.Equal(t, tt.wantDelay, app.NextRetryDelay())
			}
			require.True(t, app.HasDetails())
			var f HTTPFailure
			require.NoError(t, app.Details(&f))
			assert.Equal(t, HTTPFailure{Status: tt.status, BodyTail: tt.wantTail, Attempt: 1}, f)
			assert.Equal(t, tt.status, res.Status, "the result is returned with the error")
			assert.Equal(t, tt.body, res.Body)
		})
	}
}

func TestHTTPRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		v    string
		want time.Duration
	}{
		{"absent", "", 0},
		{"seconds", "2", 2 * time.Second},
		{"seconds with space", " 30 ", 30 * time.Second},
		{"zero", "0", 0},
		{"negative", "-5", 0},
		{"capped", "601", MaxRetryAfter},
		{"huge", "99999999999999999", MaxRetryAfter},
		{"fraction is malformed", "1.5", 0},
		{"garbage", "soon", 0},
		{"IMF date", now.Add(45 * time.Second).Format(http.TimeFormat), 45 * time.Second},
		{"RFC 850 date", now.Add(time.Minute).Format(time.RFC850), time.Minute},
		{"date far ahead is capped", now.Add(time.Hour).Format(http.TimeFormat), MaxRetryAfter},
		{"date in the past", now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, httpRetryAfter(tt.v, now))
		})
	}
}

func TestRunHTTPSecretHeader(t *testing.T) {
	const secret = "s3cr3t-t0ken-value"
	t.Setenv("GF_TEST_API_TOKEN", secret)

	tests := []struct {
		name   string
		status int
	}{
		{"success", http.StatusOK},
		{"rejected", http.StatusUnauthorized},
		{"server error", http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The server echoes the Authorization header back in a header and the body, as
			// debugging endpoints do.
			var seenAuth atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seenAuth.Store(r.Header.Get("Authorization"))
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Echo", r.Header.Get("Authorization"))
				w.WriteHeader(tt.status)
				_ = json.NewEncoder(w).Encode(map[string]string{"you_sent": r.Header.Get("Authorization")})
			}))
			defer srv.Close()

			in := HTTP{URL: srv.URL + "/me", Headers: map[string]string{
				"Authorization": "Bearer " + Secret("GF_TEST_API_TOKEN"),
				"Accept":        "application/json",
			}}
			res, err := RunHTTP(context.Background(), in)

			assert.Equal(t, "Bearer "+secret, seenAuth.Load(), "the server sees the real header")

			input, mErr := json.Marshal(in)
			require.NoError(t, mErr)
			assert.NotContains(t, string(input), secret, "the activity input holds the placeholder only")
			assert.Contains(t, string(input), `${secret:GF_TEST_API_TOKEN}`)

			redacted := RedactHeaders(in.Headers)
			assert.Equal(t, "Bearer ${secret:GF_TEST_API_TOKEN}", redacted["Authorization"])
			for _, v := range redacted {
				assert.NotContains(t, v, secret)
			}

			out, mErr := json.Marshal(res)
			require.NoError(t, mErr)
			assert.NotContains(t, string(out), secret, "an echoed secret is scrubbed from the result")
			assert.Equal(t, []string{"Bearer " + RedactedValue}, res.Headers["X-Echo"], "an echoed secret is scrubbed from any header")
			assert.Equal(t, tt.status, res.Status)

			if tt.status == http.StatusOK {
				require.NoError(t, err)
				assert.JSONEq(t, `{"you_sent":"Bearer [redacted]"}`, string(res.JSON))
				return
			}
			app := httpRequireAppError(t, err, HTTPStatusErrorType)
			assert.NotContains(t, app.Message(), secret)
			assert.NotContains(t, err.Error(), secret)
			assert.Contains(t, app.Message(), `{"you_sent":"Bearer [redacted]"}`)
			var f HTTPFailure
			require.NoError(t, app.Details(&f))
			assert.NotContains(t, f.BodyTail, secret)
			failure := temporal.GetDefaultFailureConverter().ErrorToFailure(err)
			wire, mErr := proto.Marshal(failure)
			require.NoError(t, mErr)
			assert.NotContains(t, string(wire), secret, "nothing sent to the server holds the secret")
		})
	}
}

func TestRunHTTPMissingSecret(t *testing.T) {
	t.Setenv("GF_TEST_EMPTY_SECRET", "")
	t.Setenv("GF_TEST_PRESENT_SECRET", "present-value")
	tests := []struct {
		name    string
		headers map[string]string
		wantMsg string
	}{
		{"unset", map[string]string{"Authorization": "Bearer " + Secret("GF_TEST_UNSET_SECRET")},
			"header Authorization: secret GF_TEST_UNSET_SECRET: environment variable GF_TEST_UNSET_SECRET is not set on the worker"},
		{"empty", map[string]string{"X-Api-Key": Secret("GF_TEST_EMPTY_SECRET")},
			"header X-Api-Key: secret GF_TEST_EMPTY_SECRET: environment variable GF_TEST_EMPTY_SECRET is not set on the worker"},
		{"second of two", map[string]string{"X-Creds": Secret("GF_TEST_PRESENT_SECRET") + ":" + Secret("GF_TEST_UNSET_SECRET")},
			"header X-Creds: secret GF_TEST_UNSET_SECRET: environment variable GF_TEST_UNSET_SECRET is not set on the worker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
			defer srv.Close()
			_, err := RunHTTP(context.Background(), HTTP{URL: srv.URL, Headers: tt.headers})
			app := httpRequireAppError(t, err, InvalidStepErrorType)
			assert.True(t, app.NonRetryable())
			assert.Equal(t, "GET "+srv.URL+": "+tt.wantMsg, app.Message())
			assert.NotContains(t, app.Message(), "present-value")
			assert.Zero(t, calls.Load(), "no request is sent")
		})
	}
}

func TestRunHTTPResponseHeadersRedacted(t *testing.T) {
	srv, _ := httpEchoServer(t, http.StatusOK, map[string]string{
		"Set-Cookie":       "session=abc123; HttpOnly",
		"X-Api-Key":        "k-123",
		"X-Session-Token":  "tok",
		"Content-Type":     "text/plain",
		"X-Ratelimit-Left": "41",
	}, "ok")
	res, err := RunHTTP(context.Background(), HTTP{URL: srv.URL})
	require.NoError(t, err)
	assert.Equal(t, []string{RedactedValue}, res.Headers["Set-Cookie"])
	assert.Equal(t, []string{RedactedValue}, res.Headers["X-Api-Key"])
	assert.Equal(t, []string{RedactedValue}, res.Headers["X-Session-Token"])
	assert.Equal(t, []string{"text/plain"}, res.Headers["Content-Type"])
	assert.Equal(t, []string{"41"}, res.Headers["X-Ratelimit-Left"])
}

func TestRunHTTPTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(release)

	tests := []struct {
		name string
		in   HTTP
	}{
		{"waiting for headers", HTTP{URL: srv.URL + "/slow?api_key=s3cr3t", Timeout: 200 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := RunHTTP(context.Background(), tt.in)
			elapsed := time.Since(start)
			assert.Less(t, elapsed, 2*time.Second, "the step's timeout ends the attempt")
			assert.GreaterOrEqual(t, elapsed, 200*time.Millisecond)
			app := httpRequireAppError(t, err, HTTPTransportErrorType)
			assert.False(t, app.NonRetryable(), "a timed-out attempt may be retried")
			assert.Equal(t, "GET "+srv.URL+"/slow?api_key=[redacted]: timed out after 200ms", app.Message())
			assert.Equal(t, 0, res.Status)
		})
	}
}

func TestRunHTTPTimeoutWhileReadingBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	start := time.Now()
	_, err := RunHTTP(context.Background(), HTTP{URL: srv.URL, Timeout: 200 * time.Millisecond})
	assert.Less(t, time.Since(start), 2*time.Second)
	app := httpRequireAppError(t, err, HTTPTransportErrorType)
	assert.Equal(t, "GET "+srv.URL+": timed out after 200ms", app.Message())
	var f HTTPFailure
	require.NoError(t, app.Details(&f))
	assert.Equal(t, 200, f.Status, "the status had arrived")
}

func TestRunHTTPContextCancel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()

	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		wantErr error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"caller's deadline before the step's timeout", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, context.DeadlineExceeded},
		{"already cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			_, err := RunHTTP(ctx, HTTP{URL: srv.URL + "/wait", Timeout: 5 * time.Second})
			assert.Less(t, time.Since(start), 2*time.Second)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.wantErr)
			var app *temporal.ApplicationError
			assert.False(t, errors.As(err, &app), "the caller's cancellation is not a step failure")
			assert.Equal(t, "GET "+srv.URL+"/wait: "+tt.wantErr.Error(), err.Error())
		})
	}
}

func TestRunHTTPTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there any more

	tests := []struct {
		name    string
		url     string
		wantURL string
	}{
		{"connection refused", addr + "/x", addr + "/x"},
		{"secrets in the url are redacted", strings.Replace(addr, "http://", "http://bob:hunter2@", 1) + "/x?token=s3cr3t&page=2",
			strings.Replace(addr, "http://", "http://bob:[redacted]@", 1) + "/x?token=[redacted]&page=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RunHTTP(context.Background(), HTTP{URL: tt.url, Timeout: 5 * time.Second})
			app := httpRequireAppError(t, err, HTTPTransportErrorType)
			assert.False(t, app.NonRetryable())
			assert.True(t, strings.HasPrefix(app.Message(), "GET "+tt.wantURL+": "), app.Message())
			assert.Contains(t, app.Message(), "connection refused")
			assert.NotContains(t, app.Message(), "hunter2")
			assert.NotContains(t, app.Message(), "s3cr3t")
			var f HTTPFailure
			require.NoError(t, app.Details(&f))
			assert.Equal(t, HTTPFailure{Status: 0, Attempt: 1}, f)
		})
	}
}

func TestRunHTTPTruncatesBody(t *testing.T) {
	tests := []struct {
		name          string
		contentType   string
		body          string
		wantLen       int
		wantTruncated bool
	}{
		{"exactly the limit", "text/plain", strings.Repeat("a", MaxOutputBytes), MaxOutputBytes, false},
		{"over the limit", "text/plain", strings.Repeat("b", MaxOutputBytes+1000), MaxOutputBytes, true},
		{"cut inside a character", "text/plain", "x" + strings.Repeat("é", MaxOutputBytes/2), MaxOutputBytes - 1, true},
		{"cut JSON is not parsed", "application/json", `[` + strings.Repeat(`"abcdefgh",`, MaxOutputBytes/10) + `"z"]`, MaxOutputBytes, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := httpEchoServer(t, http.StatusOK, map[string]string{"Content-Type": tt.contentType}, tt.body)
			res, err := RunHTTP(context.Background(), HTTP{URL: srv.URL})
			require.NoError(t, err)
			assert.Len(t, res.Body, tt.wantLen)
			assert.Equal(t, tt.wantTruncated, res.Truncated)
			assert.True(t, strings.HasPrefix(tt.body, res.Body))
			assert.True(t, utf8.ValidString(res.Body), "the cut keeps UTF-8 valid")
			assert.Nil(t, res.JSON)
		})
	}
}

// TestRunHTTPFailureSurvivesTheWire checks that a failed step's error can be sent to the
// server: the failure is a protobuf message whose strings must be valid UTF-8.
func TestRunHTTPFailureSurvivesTheWire(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"ascii", strings.Repeat("e", 3000)},
		{"multi-byte misaligned", "x" + strings.Repeat("é", 1500)},
		{"invalid UTF-8", "bad \xff\xfe bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := httpEchoServer(t, http.StatusInternalServerError, map[string]string{"Content-Type": "text/plain"}, tt.body)
			_, err := RunHTTP(context.Background(), HTTP{URL: srv.URL})
			app := httpRequireAppError(t, err, HTTPStatusErrorType)
			assert.True(t, utf8.ValidString(app.Message()))
			failure := temporal.GetDefaultFailureConverter().ErrorToFailure(err)
			_, merr := proto.Marshal(failure)
			assert.NoError(t, merr, "the failure of an HTTP step cannot be marshalled for the server")
		})
	}
}

func TestRedactHeaders(t *testing.T) {
	tests := []struct {
		name  string
		in    map[string]string
		want  map[string]string
		input string // a value that must not appear in the output
	}{
		{"nil", nil, nil, ""},
		{"plain headers kept", map[string]string{"Accept": "application/json", "X-Trace": "abc"},
			map[string]string{"Accept": "application/json", "X-Trace": "abc"}, ""},
		{"authorization literal", map[string]string{"Authorization": "Bearer abc.def"},
			map[string]string{"Authorization": RedactedValue}, "abc.def"},
		{"authorization placeholder kept", map[string]string{"Authorization": "Bearer " + Secret("API_TOKEN")},
			map[string]string{"Authorization": "Bearer ${secret:API_TOKEN}"}, ""},
		{"bare placeholder kept", map[string]string{"X-Api-Key": Secret("KEY")},
			map[string]string{"X-Api-Key": "${secret:KEY}"}, ""},
		{"cookie placeholder kept", map[string]string{"Cookie": "session=" + Secret("SID")},
			map[string]string{"Cookie": "session=${secret:SID}"}, ""},
		{"placeholder next to a literal secret", map[string]string{"Authorization": "Basic hunter2" + Secret("X")},
			map[string]string{"Authorization": RedactedValue}, "hunter2"},
		{"two cookies, one literal", map[string]string{"Cookie": "a=" + Secret("A") + "; b=literal"},
			map[string]string{"Cookie": RedactedValue}, "literal"},
		{"case-insensitive names", map[string]string{"authorization": "x1", "PROXY-AUTHORIZATION": "x2", "cookie": "x3", "Set-Cookie": "x4"},
			map[string]string{"authorization": RedactedValue, "PROXY-AUTHORIZATION": RedactedValue, "cookie": RedactedValue, "Set-Cookie": RedactedValue}, "x"},
		{"words in names", map[string]string{"X-Auth-User": "u", "X-API-KEY": "k", "X-Access-Token": "t", "Client-Secret": "s",
			"X-Password": "p", "X-Hub-Signature": "sig", "Content-Type": "text/plain"},
			map[string]string{"X-Auth-User": RedactedValue, "X-API-KEY": RedactedValue, "X-Access-Token": RedactedValue,
				"Client-Secret": RedactedValue, "X-Password": RedactedValue, "X-Hub-Signature": RedactedValue, "Content-Type": "text/plain"}, ""},
		{"placeholder in a harmless header kept", map[string]string{"X-Tenant": Secret("TENANT")},
			map[string]string{"X-Tenant": "${secret:TENANT}"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before map[string]string
			if tt.in != nil {
				before = make(map[string]string, len(tt.in))
				for k, v := range tt.in {
					before[k] = v
				}
			}
			got := RedactHeaders(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, before, tt.in, "the input is not modified")
			if tt.input != "" {
				for _, v := range got {
					assert.NotContains(t, v, tt.input)
				}
			}
		})
	}
}

func TestHTTPRedactURL(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"https://example.com/a/b", "https://example.com/a/b"},
		{"https://user:pw@example.com/", "https://user:[redacted]@example.com/"},
		{"https://ghp_abcdef@github.com/x", "https://[redacted]@github.com/x"},
		{"https://example.com/?page=2&api_key=abc&q=go", "https://example.com/?page=2&api_key=[redacted]&q=go"},
		{"https://example.com/?Token=abc&X-Amz-Signature=ff&X-Amz-Credential=c&client_secret=s&password=p&auth=a",
			"https://example.com/?Token=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&client_secret=[redacted]&password=[redacted]&auth=[redacted]"},
		{"https://example.com/?access%5Ftoken=abc", "https://example.com/?access%5Ftoken=[redacted]"},
		{"https://example.com/?token", "https://example.com/?token"},
		{"http://127.0.0.1:8080/p?q=1#frag", "http://127.0.0.1:8080/p?q=1#frag"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := url.Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, httpRedactURL(u))
			assert.Equal(t, tt.in, u.String(), "the URL itself is not modified")
		})
	}
}

func TestSecret(t *testing.T) {
	assert.Equal(t, "${secret:API_TOKEN}", Secret("API_TOKEN"))
	assert.Equal(t, "Bearer ${secret:API_TOKEN}", "Bearer "+Secret("API_TOKEN"))
	assert.NoError(t, HTTP{URL: "http://x", Headers: map[string]string{"Authorization": "Bearer " + Secret("API_TOKEN")}}.Validate())
}

func TestRunHTTPInActivityEnvironment(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true}`)
		case "/slow":
			time.Sleep(1300 * time.Millisecond)
			_, _ = io.WriteString(w, "done")
		case "/busy":
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	tests := []struct {
		name             string
		in               HTTP
		wantBody         string
		wantErrType      string
		wantNonRetryable bool
		wantDelay        time.Duration
		wantStatus       int
		wantHeartbeats   bool
	}{
		{name: "success", in: HTTP{URL: srv.URL + "/ok"}, wantBody: `{"ok":true}`},
		{name: "heartbeats while waiting", in: HTTP{URL: srv.URL + "/slow"}, wantBody: "done", wantHeartbeats: true},
		{name: "404", in: HTTP{URL: srv.URL + "/missing"}, wantErrType: HTTPStatusErrorType, wantStatus: 404, wantNonRetryable: true},
		{name: "429 asks for a delay", in: HTTP{URL: srv.URL + "/busy"}, wantErrType: HTTPStatusErrorType, wantStatus: 429, wantDelay: 2 * time.Second},
		{name: "invalid step", in: HTTP{URL: "gopher://x"}, wantErrType: InvalidStepErrorType, wantNonRetryable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
			env := s.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(RunHTTP, activity.RegisterOptions{Name: HTTPActivity})
			var heartbeats atomic.Int32
			env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { heartbeats.Add(1) })

			val, err := env.ExecuteActivity(HTTPActivity, tt.in)
			if tt.wantErrType != "" {
				app := httpRequireAppError(t, err, tt.wantErrType)
				assert.Equal(t, tt.wantNonRetryable, app.NonRetryable())
				assert.Equal(t, tt.wantDelay, app.NextRetryDelay())
				if tt.wantStatus != 0 {
					var f HTTPFailure
					require.NoError(t, app.Details(&f))
					assert.Equal(t, HTTPFailure{Status: tt.wantStatus, BodyTail: f.BodyTail, Attempt: 1}, f)
				}
				return
			}
			require.NoError(t, err)
			var res HTTPResult
			require.NoError(t, val.Get(&res))
			assert.Equal(t, 200, res.Status)
			assert.Equal(t, tt.wantBody, res.Body)
			assert.Equal(t, 1, res.Attempt, "the attempt comes from the activity info")
			if tt.wantHeartbeats {
				assert.Greater(t, heartbeats.Load(), int32(0), "a response slower than a second heartbeats")
			}
		})
	}
}
