package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/internal/retryafter"
)

// HTTPActivity is the Temporal activity name of HTTP steps.
const HTTPActivity = "gateflow.http"

// HTTPStatusErrorType is the Temporal application error type of a response whose status is
// not one the step expects. It is non-retryable for 4xx statuses other than 408 and 429.
const HTTPStatusErrorType = "gateflow.HTTPStatus"

// HTTPTransportErrorType is the Temporal application error type of a request that got no
// complete response: connection refused or reset, TLS failure, too many redirects, or the
// step's Timeout passing. It is retryable.
const HTTPTransportErrorType = "gateflow.HTTPTransport"

// InvalidStepErrorType is the Temporal application error type of a step refused before it
// ran: its Validate failed, or a secret it refers to is not set on the worker. It is
// non-retryable.
const InvalidStepErrorType = "gateflow.InvalidStep"

// DefaultHTTPTimeout bounds one attempt of an HTTP step whose Timeout is zero.
const DefaultHTTPTimeout = 30 * time.Second

// MaxRetryAfter caps the delay a Retry-After header may ask for before the next attempt.
const MaxRetryAfter = 10 * time.Minute

// RedactedValue replaces secret values in step records, results and error messages.
const RedactedValue = "[redacted]"

// httpMessageBodyBytes is how much of the start of a failed response's body its error
// message carries.
const httpMessageBodyBytes = 512

// httpClient sends every HTTP step. It has no timeout of its own (each attempt's deadline
// comes from its context) and follows redirects as Go does by default (at most 10; on a
// redirect to another host Authorization and Cookie headers are dropped).
var httpClient = &http.Client{}

// HTTP is an HTTP step: one request whose response status decides success.
//
// Header values may contain secret placeholders made with Secret; they are replaced with
// the worker's environment variables when the request is sent, so the secret itself never
// appears in the step's input (and so in Temporal's history). Placeholders are only
// resolved in header values.
type HTTP struct {
	// Method is the request method, case-insensitive (sent upper-case). Empty means GET.
	Method string `json:"method"`
	// URL is the absolute http or https URL to call. Required.
	URL string `json:"url"`
	// Headers are request headers. Values may hold Secret placeholders.
	Headers map[string]string `json:"headers,omitempty"`
	// Body is sent as is. At most one of Body and JSON may be set.
	Body string `json:"body,omitempty"`
	// JSON is sent as the body with Content-Type application/json (unless Headers sets
	// another Content-Type). At most one of Body and JSON may be set.
	JSON json.RawMessage `json:"json,omitempty"`
	// Timeout bounds one attempt, from sending the request to reading the whole response.
	// Zero means DefaultHTTPTimeout (30s).
	Timeout time.Duration `json:"timeout,omitempty"`
	// ExpectStatus lists the statuses that count as success. Empty means any 2xx.
	ExpectStatus []int `json:"expect_status,omitempty"`
	// IdempotencyHeader names the header the step's idempotency key (see IdempotencyKey) is
	// sent in, the same for every attempt of the step. Empty means
	// DefaultIdempotencyHeader ("Idempotency-Key"); NoIdempotencyHeader ("-") sends none. A
	// value Headers gives that header is sent instead of the key.
	IdempotencyHeader string `json:"idempotency_header,omitempty"`
}

// Validate reports what is wrong with an HTTP step before it is dispatched. It does not
// look at the environment: a secret missing on the worker is only noticed by RunHTTP.
func (h HTTP) Validate() error {
	if strings.TrimSpace(h.URL) == "" {
		return errors.New("http: url is empty")
	}
	u, err := url.Parse(h.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL, which may hold a secret
		}
		return fmt.Errorf("http: url is invalid: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("http: url %s: scheme must be http or https", httpRedactURL(u))
	}
	if u.Host == "" {
		return fmt.Errorf("http: url %s has no host", httpRedactURL(u))
	}
	if strings.Contains(h.URL, httpSecretPrefix) {
		return errors.New("http: url holds a secret placeholder; placeholders are only resolved in header values")
	}
	if h.Method != "" && !httpIsToken(h.Method) {
		return fmt.Errorf("http: method %q is invalid", h.Method)
	}
	if h.Body != "" && len(h.JSON) > 0 {
		return errors.New("http: both body and json are set; use one")
	}
	if len(h.JSON) > 0 && !json.Valid(h.JSON) {
		return errors.New("http: json is not valid JSON")
	}
	if strings.Contains(h.Body, httpSecretPrefix) || strings.Contains(string(h.JSON), httpSecretPrefix) {
		return errors.New("http: body holds a secret placeholder; placeholders are only resolved in header values")
	}
	if h.Timeout < 0 {
		return fmt.Errorf("http: timeout %s is negative", h.Timeout)
	}
	seen := make(map[string]string, len(h.Headers))
	for _, name := range httpSortedKeys(h.Headers) {
		if !httpIsToken(name) {
			return fmt.Errorf("http: header name %q is invalid", name)
		}
		canon := http.CanonicalHeaderKey(name)
		if other, dup := seen[canon]; dup {
			return fmt.Errorf("http: headers %q and %q differ only in case", other, name)
		}
		seen[canon] = name
		switch canon {
		case "Content-Length", "Transfer-Encoding":
			return fmt.Errorf("http: header %s is set from the body; remove it", name)
		}
		value := h.Headers[name]
		if strings.ContainsAny(value, "\r\n\x00") {
			return fmt.Errorf("http: header %s has a line break or NUL in its value", name)
		}
		if err := httpCheckPlaceholders(value); err != nil {
			return fmt.Errorf("http: header %s: %v", name, err)
		}
	}
	if ih := h.IdempotencyHeader; ih != "" && ih != NoIdempotencyHeader {
		if !httpIsToken(ih) {
			return fmt.Errorf("http: idempotency_header %q is not a valid header name (want a name like Idempotency-Key, or - for none)", ih)
		}
		switch http.CanonicalHeaderKey(ih) {
		case "Content-Length", "Transfer-Encoding", "Host", "Content-Type":
			return fmt.Errorf("http: idempotency_header %s: that header carries something else; name another", ih)
		}
	}
	for _, s := range h.ExpectStatus {
		if s < 100 || s > 599 {
			return fmt.Errorf("http: expect_status %d is out of range 100..599", s)
		}
	}
	return nil
}

// HTTPResult is what an HTTP step received.
type HTTPResult struct {
	// Status is the response status code.
	Status int `json:"status"`
	// Headers are the response headers; values of sensitive ones (see RedactHeaders) are
	// RedactedValue.
	Headers map[string][]string `json:"headers"`
	// Body is the response body, at most MaxOutputBytes of it.
	Body string `json:"body"`
	// JSON is the body again when the response says it is JSON (Content-Type
	// application/json or any +json type), is complete and parses.
	JSON json.RawMessage `json:"json,omitempty"`
	// Truncated is set when the body was longer than MaxOutputBytes.
	Truncated bool `json:"truncated,omitempty"`
	// Duration is the time from sending the request to reading the end of the body.
	Duration time.Duration `json:"duration"`
	// Attempt is the activity attempt that produced this result (1 for the first).
	Attempt int `json:"attempt"`
}

// HTTPFailure is the detail attached to a failed HTTP step's error.
type HTTPFailure struct {
	// Status is the response status, or 0 when there was no response.
	Status int `json:"status"`
	// BodyTail is the end of the response body (at most StderrTailBytes), trimmed.
	BodyTail string `json:"body_tail"`
	// Attempt is the activity attempt that failed (1 for the first).
	Attempt int `json:"attempt"`
	// TimedOut marks a request that got no answer within the step's Timeout.
	TimedOut bool `json:"timed_out,omitempty"`
}

// RunHTTP is the HTTP step activity. It sends one request and reads the response, within
// in.Timeout and ctx, heartbeating every second while it waits.
//
// A status the step does not expect fails with an application error of type
// HTTPStatusErrorType whose message carries the method, URL, status and the start of the
// body, and whose details are an HTTPFailure; 4xx statuses other than 408 and 429 are
// non-retryable, and a 429 or 503 with a Retry-After header asks for that delay (at most
// MaxRetryAfter) before the next attempt. A request without a response fails with
// HTTPTransportErrorType (retryable); an invalid step or a missing secret with
// InvalidStepErrorType (non-retryable). If ctx itself ends, its error is returned.
//
// Inside a worker the request carries the step's idempotency key (see IdempotencyKey) in
// the Idempotency-Key header, or the one HTTP.IdempotencyHeader names.
//
// URLs in messages have passwords and secret-looking query parameters redacted, and any
// resolved secret value the server echoes back is replaced by RedactedValue in the result
// and the error.
func RunHTTP(ctx context.Context, in HTTP) (HTTPResult, error) {
	if err := in.Validate(); err != nil {
		return HTTPResult{}, httpInvalidStep(err.Error())
	}
	attempt := 1
	id, inActivity := Identity(ctx)
	if inActivity {
		attempt = id.Attempt
	}
	method := strings.ToUpper(in.Method)
	if method == "" {
		method = http.MethodGet
	}
	u, _ := url.Parse(in.URL) // Validate parsed it
	where := method + " " + httpRedactURL(u)

	headers, secrets, err := httpResolveSecrets(in.Headers)
	if err != nil {
		return HTTPResult{Attempt: attempt}, httpInvalidStep(fmt.Sprintf("%s: %v", where, err))
	}

	timeout := in.Timeout
	if timeout == 0 {
		timeout = DefaultHTTPTimeout
	}
	reqCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var body io.Reader
	if in.Body != "" {
		body = strings.NewReader(in.Body)
	} else if len(in.JSON) > 0 {
		body = strings.NewReader(string(in.JSON))
	}
	req, err := http.NewRequestWithContext(reqCtx, method, in.URL, body)
	if err != nil {
		return HTTPResult{Attempt: attempt}, httpInvalidStep(fmt.Sprintf("%s: %v", where, httpUnwrapURLError(err)))
	}
	if len(in.JSON) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "gateflow")
	if name := httpIdempotencyHeader(in.IdempotencyHeader); name != "" && inActivity {
		req.Header.Set(name, id.Key) // a value in Headers replaces it below
	}
	for name, value := range headers {
		if http.CanonicalHeaderKey(name) == "Host" {
			req.Host = value
			continue
		}
		req.Header.Set(name, value)
	}

	start := time.Now()
	got := httpDoHeartbeating(ctx, req)
	res := HTTPResult{Duration: time.Since(start), Attempt: attempt}
	scrub := func(s string) string { return httpScrubSecrets(s, secrets) }

	if got.err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return res, fmt.Errorf("%s: %w", where, ctxErr)
		}
		msg := scrub(httpUnwrapURLError(got.err).Error())
		timedOut := errors.Is(reqCtx.Err(), context.DeadlineExceeded)
		if timedOut {
			msg = "timed out after " + timeout.String()
		}
		return res, temporal.NewApplicationErrorWithOptions(where+": "+httpValidUTF8(msg), HTTPTransportErrorType,
			temporal.ApplicationErrorOptions{Details: []any{HTTPFailure{Status: got.status, Attempt: attempt, TimedOut: timedOut}}})
	}

	res.Status = got.status
	res.Body = scrub(got.body)
	res.Truncated = got.truncated
	res.Headers = make(map[string][]string, len(got.header))
	for name, values := range got.header {
		out := make([]string, len(values))
		for i, v := range values {
			if httpSensitiveHeader(name) {
				v = RedactedValue
			}
			out[i] = scrub(v)
		}
		res.Headers[name] = out
	}
	if !res.Truncated && httpIsJSON(got.header.Get("Content-Type")) && json.Valid([]byte(res.Body)) {
		res.JSON = json.RawMessage(res.Body)
	}

	if httpStatusExpected(res.Status, in.ExpectStatus) {
		return res, nil
	}
	msg := fmt.Sprintf("%s: status %s", where, httpStatusText(res.Status))
	if snippet := httpOneLine(res.Body, httpMessageBodyBytes); snippet != "" {
		msg += ": " + snippet
	}
	opts := temporal.ApplicationErrorOptions{
		NonRetryable: res.Status >= 400 && res.Status < 500 &&
			res.Status != http.StatusRequestTimeout && res.Status != http.StatusTooManyRequests,
		Details: []any{HTTPFailure{
			Status:   res.Status,
			BodyTail: httpValidUTF8(Tail(res.Body, StderrTailBytes)),
			Attempt:  attempt,
		}},
	}
	if res.Status == http.StatusTooManyRequests || res.Status == http.StatusServiceUnavailable {
		opts.NextRetryDelay = httpRetryAfter(got.header.Get("Retry-After"), time.Now())
	}
	return res, temporal.NewApplicationErrorWithOptions(msg, HTTPStatusErrorType, opts)
}

// httpOutcome is what the request goroutine hands back to RunHTTP.
type httpOutcome struct {
	status    int
	header    http.Header
	body      string
	truncated bool
	err       error
}

// httpDoHeartbeating sends req and reads at most MaxOutputBytes of the response body while
// heartbeating every second (inside an activity). The request carries its own context, so
// cancelling it ends the wait.
func httpDoHeartbeating(ctx context.Context, req *http.Request) httpOutcome {
	done := make(chan httpOutcome, 1)
	go func() {
		resp, err := httpClient.Do(req)
		if err != nil {
			done <- httpOutcome{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxOutputBytes+1))
		out := httpOutcome{status: resp.StatusCode, header: resp.Header, err: err}
		if len(b) > MaxOutputBytes {
			b = httpTrimPartialRune(b[:MaxOutputBytes])
			out.truncated = true
		}
		out.body = string(b)
		done <- out
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	isActivity := activity.IsActivity(ctx)
	for {
		select {
		case out := <-done:
			return out
		case <-tick.C:
			if isActivity {
				activity.RecordHeartbeat(ctx)
			}
		}
	}
}

// httpIdempotencyHeader is the header the idempotency key goes in, "" for none.
func httpIdempotencyHeader(name string) string {
	switch name {
	case "":
		return DefaultIdempotencyHeader
	case NoIdempotencyHeader:
		return ""
	}
	return name
}

// httpRetryAfter parses a Retry-After header (delay seconds or an HTTP date) into a delay
// capped at MaxRetryAfter; zero when absent, malformed or already past.
func httpRetryAfter(v string, now time.Time) time.Duration {
	return min(retryafter.Parse(v, now), MaxRetryAfter)
}

// httpStatusExpected reports whether status counts as success: one of expect, or any 2xx when
// expect is empty.
func httpStatusExpected(status int, expect []int) bool {
	if len(expect) == 0 {
		return status >= 200 && status < 300
	}
	return slices.Contains(expect, status)
}

// httpStatusText is "503 Service Unavailable", or just the code when it has no standard text.
func httpStatusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return strconv.Itoa(code)
}

// httpIsJSON reports whether a Content-Type is application/json or a +json type.
func httpIsJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasSuffix(mt, "+json") && strings.Contains(mt, "/"))
}

// httpOneLine collapses white space in s to single spaces and keeps at most n bytes of it,
// cut on a character boundary and marked with "…" when cut.
func httpOneLine(s string, n int) string {
	s = strings.Join(strings.Fields(httpValidUTF8(s)), " ")
	if len(s) <= n {
		return s
	}
	return string(httpTrimPartialRune([]byte(s[:n]))) + "…"
}

// httpTrimPartialRune drops an incomplete UTF-8 sequence from the end of b.
func httpTrimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if r := b[len(b)-i]; utf8.RuneStart(r) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// httpValidUTF8 makes s safe for a protobuf string (error messages travel as protobuf).
func httpValidUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// httpIsToken reports whether s is an RFC 9110 token (method and header names).
func httpIsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// httpUnwrapURLError drops the *url.Error wrapper, whose text repeats the (unredacted) URL.
func httpUnwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// httpInvalidStep is the non-retryable error of a step refused before it ran.
func httpInvalidStep(msg string) error {
	return temporal.NewNonRetryableApplicationError(httpValidUTF8(msg), InvalidStepErrorType, nil)
}

func httpSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
