package gates

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HTTPType is the type of the built-in HTTP resolver.
const HTTPType = "http"

// maxHTTPBody is the most of a response HTTP reads.
const maxHTTPBody = 1 << 20

// HTTP is the built-in resolver "http": each poll requests a URL and reads one field of
// its JSON answer. The gate is approved when the field equals one of the approve values,
// rejected when it equals one of the reject values, and pending otherwise, with a message
// saying what the field holds. An answer that does not say (a status other than 2xx, a
// body that is not JSON, a missing field) is pending too, with a message saying why, so a
// service that is briefly down does not decide the gate; only a request that gets no
// answer at all (connection refused, DNS, timeout) is a failed poll (see MaxFailedPolls).
// Its params are HTTPParams.
type HTTP struct {
	// Client sends the requests; nil means a client with a 30-second timeout.
	Client *http.Client
}

// HTTPParams are the params of an "http" gate.
type HTTPParams struct {
	// URL is the http or https URL to request.
	URL string `json:"url"`
	// Method is the request's method; empty means GET.
	Method string `json:"method,omitempty"`
	// Headers are sent with the request (an Accept of application/json by default).
	Headers map[string]string `json:"headers,omitempty"`
	// Body is sent with the request (as JSON) when set.
	Body json.RawMessage `json:"body,omitempty"`
	// Field is the dotted path of the field to read in the JSON answer: "status",
	// "checks.state", "items.0.state" (a number indexes an array). Required.
	Field string `json:"field"`
	// Equals is the value that approves the gate; ApproveValues lists more. At least one
	// value is required. A value matches a field of equal JSON value (1 matches 1.0); a
	// string value also matches a number or boolean written the same way ("200", "true").
	Equals        any   `json:"equals,omitempty"`
	ApproveValues []any `json:"approve_values,omitempty"`
	// RejectValues are values that reject the gate (none by default).
	RejectValues []any `json:"reject_values,omitempty"`
}

// Type implements Resolver.
func (HTTP) Type() string { return HTTPType }

// Poll implements Resolver.
func (h HTTP) Poll(ctx context.Context, p Params) (Poll, error) {
	var in HTTPParams
	if err := p.Decode(&in); err != nil {
		return Poll{}, err
	}
	if err := in.validate(); err != nil {
		return Poll{}, &ParamsError{Type: HTTPType, Reason: err.Error()}
	}
	method := strings.ToUpper(strings.TrimSpace(in.Method))
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if len(in.Body) > 0 {
		body = bytes.NewReader(in.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, in.URL, body)
	if err != nil {
		return Poll{}, &ParamsError{Type: HTTPType, Reason: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range in.Headers {
		req.Header.Set(k, v)
	}
	client := h.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Poll{}, fmt.Errorf("gate http: %s %s: %w", method, in.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		return Poll{}, fmt.Errorf("gate http: %s %s: read the answer: %w", method, in.URL, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Pending(fmt.Sprintf("%s %s answered %s", method, in.URL, resp.Status)), nil
	}
	if len(raw) > maxHTTPBody {
		return Pending(fmt.Sprintf("%s %s: the answer is over %d bytes", method, in.URL, maxHTTPBody)), nil
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Pending(fmt.Sprintf("%s %s: the answer is not JSON: %v", method, in.URL, err)), nil
	}
	v, ok := lookup(doc, in.Field)
	if !ok {
		return Pending(fmt.Sprintf("%s %s: the answer has no field %s", method, in.URL, in.Field)), nil
	}
	got := show(v)
	approve := in.ApproveValues
	if in.Equals != nil {
		approve = append([]any{in.Equals}, approve...)
	}
	switch {
	case matchesAny(v, in.RejectValues):
		return Rejected(fmt.Sprintf("%s is %s", in.Field, got)), nil
	case matchesAny(v, approve):
		return Approved(fmt.Sprintf("%s is %s", in.Field, got)), nil
	}
	return Pending(fmt.Sprintf("%s is %s", in.Field, got)), nil
}

func (in HTTPParams) validate() error {
	u, err := url.Parse(strings.TrimSpace(in.URL))
	switch {
	case strings.TrimSpace(in.URL) == "":
		return errors.New("url is empty")
	case err != nil:
		return fmt.Errorf("url %q: %w", in.URL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("url %q is not http or https", in.URL)
	case u.Host == "":
		return fmt.Errorf("url %q has no host", in.URL)
	case strings.TrimSpace(in.Field) == "":
		return errors.New("field is empty; name the JSON field to read, e.g. \"status\" or \"checks.state\"")
	case in.Equals == nil && len(in.ApproveValues) == 0:
		return errors.New("no approve value; set equals or approve_values")
	}
	if len(in.Body) > 0 && !json.Valid(in.Body) {
		return errors.New("body is not valid JSON")
	}
	return nil
}

// lookup follows a dotted path through decoded JSON.
func lookup(doc any, path string) (any, bool) {
	cur := doc
	for _, part := range strings.Split(strings.TrimSpace(path), ".") {
		switch node := cur.(type) {
		case map[string]any:
			v, ok := node[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			cur = node[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// matchesAny reports whether got equals one of want (see HTTPParams.Equals).
func matchesAny(got any, want []any) bool {
	g := canonical(got)
	for _, w := range want {
		if canonical(w) == g {
			return true
		}
		if s, ok := w.(string); ok {
			switch got.(type) {
			case float64, bool:
				if g == s {
					return true
				}
			}
		}
	}
	return false
}

// canonical is v's JSON after a round trip through any (so 1 and 1.0, or a struct and the
// object it encodes to, compare equal).
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var back any
	if json.Unmarshal(b, &back) != nil {
		return string(b)
	}
	out, err := json.Marshal(back)
	if err != nil {
		return string(b)
	}
	return string(out)
}

// show is a field's value as a message shows it (its JSON, cut to 200 bytes).
func show(v any) string { return clip(canonical(v), 200) }
