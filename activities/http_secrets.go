package activities

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Secrets and redaction of HTTP steps: header values read from the worker's environment
// when the request is made, and URLs, headers and messages cleaned of them.

// Secret returns a placeholder for the worker's environment variable name, for use in an
// HTTP step's header values, e.g. "Bearer " + Secret("API_TOKEN"). RunHTTP replaces it with
// the variable's value when it sends the request; the step input, and so Temporal's
// history, only ever holds the placeholder "${secret:API_TOKEN}". A variable that is unset
// or empty on the worker fails the step with a non-retryable InvalidStepErrorType error
// naming the variable.
func Secret(name string) string { return httpSecretPrefix + name + "}" }

const httpSecretPrefix = "${secret:"

var (
	httpPlaceholder = regexp.MustCompile(`\$\{secret:([A-Za-z_][A-Za-z0-9_]*)\}`)
	// httpPlaceholderOnly matches a header value that shows no secret: a placeholder, optionally
	// after a scheme word or a cookie name ("Bearer ${secret:T}", "session=${secret:S}").
	httpPlaceholderOnly = regexp.MustCompile(`^\s*(?:[A-Za-z][A-Za-z0-9_-]*(?:\s+|=))?\$\{secret:[A-Za-z_][A-Za-z0-9_]*\}\s*$`)
)

// httpCheckPlaceholders reports a malformed "${secret:" placeholder in a header value.
func httpCheckPlaceholders(value string) error {
	rest := httpPlaceholder.ReplaceAllString(value, "")
	if strings.Contains(rest, httpSecretPrefix) {
		return errors.New(`malformed secret placeholder; want ${secret:NAME} with NAME made of letters, digits and _ (see activities.Secret)`)
	}
	return nil
}

// httpResolveSecrets returns the headers with their placeholders replaced by the worker's
// environment, and the secret values used (for scrubbing). The error names a variable that
// is unset or empty, never a value.
func httpResolveSecrets(headers map[string]string) (map[string]string, []string, error) {
	out := make(map[string]string, len(headers))
	var secrets []string
	for _, name := range httpSortedKeys(headers) {
		value := headers[name]
		var missing string
		resolved := httpPlaceholder.ReplaceAllStringFunc(value, func(ph string) string {
			env := httpPlaceholder.FindStringSubmatch(ph)[1]
			v, ok := os.LookupEnv(env)
			if !ok || v == "" {
				if missing == "" {
					missing = env
				}
				return ""
			}
			secrets = append(secrets, v)
			return v
		})
		if missing != "" {
			return nil, nil, fmt.Errorf("header %s: secret %s: environment variable %s is not set on the worker", name, missing, missing)
		}
		out[name] = resolved
	}
	// Longest first, so a secret that contains another is scrubbed whole.
	slices.SortFunc(secrets, func(a, b string) int {
		if c := cmp.Compare(len(b), len(a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out, slices.Compact(secrets), nil
}

// httpScrubSecrets replaces every occurrence of a secret value in s.
func httpScrubSecrets(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, RedactedValue)
	}
	return s
}

// RedactHeaders returns a copy of h for step records and logs in which the values of
// sensitive headers are RedactedValue. Sensitive are Authorization, Proxy-Authorization,
// Cookie, Set-Cookie and any header whose name contains token, secret, key, password,
// passwd, auth, cookie, session or signature (case-insensitive). A sensitive value that is
// only a Secret placeholder, optionally after a scheme word or cookie name (e.g.
// "Bearer ${secret:API_TOKEN}"), is kept: it holds no secret and shows where it comes from.
func RedactHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for name, value := range h {
		if httpSensitiveHeader(name) && !httpPlaceholderOnly.MatchString(value) {
			value = RedactedValue
		}
		out[name] = value
	}
	return out
}

var httpSensitiveHeaderWords = []string{"token", "secret", "key", "password", "passwd", "auth", "cookie", "session", "signature"}

// httpSensitiveHeader reports whether a header's value should not be shown.
func httpSensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, w := range httpSensitiveHeaderWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

var httpSensitiveQueryWords = []string{"token", "key", "secret", "password", "passwd", "pwd", "sig", "auth", "credential"}

// httpRedactURL renders u for messages: a userinfo password (or a user name without one) and
// the values of query parameters whose names look secret (token, key, secret, password,
// sig, auth, ...) are RedactedValue. The result is for reading, not for sending.
func httpRedactURL(u *url.URL) string {
	c := *u
	var user string
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			user = c.User.Username() + ":" + RedactedValue + "@"
		} else {
			// A user name without a password is usually a token (https://TOKEN@host).
			user = RedactedValue + "@"
		}
		c.User = nil
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, p := range parts {
			rawName, _, hasValue := strings.Cut(p, "=")
			name, err := url.QueryUnescape(rawName)
			if err != nil {
				name = rawName
			}
			name = strings.ToLower(name)
			for _, w := range httpSensitiveQueryWords {
				if strings.Contains(name, w) && hasValue {
					parts[i] = rawName + "=" + RedactedValue
					break
				}
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	s := c.String()
	if user != "" {
		if scheme, rest, ok := strings.Cut(s, "://"); ok {
			s = scheme + "://" + user + rest
		}
	}
	return s
}
