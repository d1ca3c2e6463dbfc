package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// wireCheck is the small hand-written part under both official SDKs, installed as their
// HTTP middleware. The SDKs return their own error types, read Retry-After only to time
// their own retries (which gateflow turns off: the activity's retry policy owns retries)
// and give up the status on an error body that is not JSON. wireCheck sees the raw HTTP
// answer first and turns it into gateflow's errors: *RateLimitError with the provider's
// Retry-After, *APIError with the status and the provider's message (API key scrubbed),
// a retryable *APIError for a transport failure or a 2xx body that is not JSON.
type wireCheck struct {
	provider   string
	apiKey     string // only to scrub it from error messages
	rateStatus []int  // statuses that mean "rate limited"
}

// middleware has the signature of both SDKs' option.Middleware.
func (c wireCheck) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	ctx := req.Context()
	resp, err := next(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("%s: %w", c.provider, ctxErr)
		}
		return nil, &APIError{Provider: c.provider, Message: "request failed: " + c.scrub(err.Error()), Retryable: true}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("%s: %w", c.provider, ctxErr)
		}
		return nil, &APIError{Provider: c.provider, Status: resp.StatusCode,
			Message: "read response: " + c.scrub(err.Error()), Retryable: true}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusError(resp, data)
	}
	if !json.Valid(data) {
		snippet := strings.TrimSpace(string(data))
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		return nil, &APIError{Provider: c.provider, Status: resp.StatusCode,
			Message: "malformed response: " + c.scrub(snippet), Retryable: true}
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Set("Content-Type", "application/json") // the SDKs decode only JSON bodies
	return resp, nil
}

// statusError is the error of a non-2xx answer.
func (c wireCheck) statusError(resp *http.Response, body []byte) error {
	msg := c.scrub(errorMessage(body, resp.StatusCode))
	for _, s := range c.rateStatus {
		if resp.StatusCode == s {
			return &RateLimitError{Provider: c.provider, Status: resp.StatusCode,
				RetryAfter: RetryAfter(resp.Header, time.Now()), Message: msg}
		}
	}
	return &APIError{Provider: c.provider, Status: resp.StatusCode, Message: msg,
		Retryable: RetryableStatus(resp.StatusCode)}
}

// scrub removes the API key from s.
func (c wireCheck) scrub(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[redacted]")
}

// sdkError returns the gateflow error inside an SDK call's error (the SDKs may wrap what
// wireCheck returned), or err named after the provider.
func sdkError(provider string, err error) error {
	var rl *RateLimitError
	var api *APIError
	switch {
	case errors.As(err, &rl):
		return rl
	case errors.As(err, &api):
		return api
	case strings.HasPrefix(err.Error(), provider+":"):
		return err
	}
	return fmt.Errorf("%s: %w", provider, err)
}
