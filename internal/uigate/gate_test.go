package uigate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/devauth"
)

// seen is what the backend (standing in for the ui-server) received.
type seen struct {
	Path    string
	Token   string
	Headers http.Header
	Cookies []string
}

// backend records every request it gets and answers 200.
type backend struct {
	mu   sync.Mutex
	reqs []seen
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	b.mu.Lock()
	b.reqs = append(b.reqs, seen{Path: r.URL.RequestURI(), Token: r.Header.Get(TokenHeader), Headers: r.Header.Clone(), Cookies: cookies})
	b.mu.Unlock()
	_, _ = io.WriteString(w, "ui-server")
}

func (b *backend) got() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]seen(nil), b.reqs...)
}

// fakeVerify accepts "tok-NAME" as NAME's token, valid until exp.
func fakeVerify(exp time.Time) func(string, time.Time) (devauth.Verified, error) {
	return func(tok string, now time.Time) (devauth.Verified, error) {
		name, ok := strings.CutPrefix(tok, "tok-")
		if !ok || name == "" {
			return devauth.Verified{}, fmt.Errorf("%w: not a token of this server", devauth.ErrTokenInvalid)
		}
		if !now.Before(exp) {
			return devauth.Verified{}, fmt.Errorf("%w: expired", devauth.ErrTokenInvalid)
		}
		return devauth.Verified{Subject: name, Expires: exp}, nil
	}
}

type fixture struct {
	back *backend
	gate *Gate
	srv  *httptest.Server
	now  time.Time
	mu   sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{back: &backend{}, now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	bs := httptest.NewServer(f.back)
	t.Cleanup(bs.Close)
	f.gate = New(strings.TrimPrefix(bs.URL, "http://"), fakeVerify(f.now.Add(time.Hour)))
	f.gate.now = func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
	f.srv = httptest.NewServer(f.gate)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// do sends a request without following redirects.
func (f *fixture) do(t *testing.T, method, path string, body io.Reader, header http.Header, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	require.NoError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := cl.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (f *fixture) login(t *testing.T, token, next string, header http.Header) *http.Response {
	t.Helper()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for k, vs := range header {
		h[k] = vs
	}
	form := url.Values{"token": {token}, "next": {next}}
	return f.do(t, http.MethodPost, LoginPath, strings.NewReader(form.Encode()), h)
}

func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == SessionCookie {
			return c
		}
	}
	return nil
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func TestRequestsWithoutALoginReachNothing(t *testing.T) {
	f := newFixture(t)
	forged := []*http.Cookie{{Name: SessionCookie, Value: strings.Repeat("ab", 32)}}
	for _, tc := range []struct {
		method, path string
		cookies      []*http.Cookie
		header       http.Header
		want         int
		location     string
	}{
		{method: "GET", path: "/", want: http.StatusSeeOther, location: LoginPath + "?next=%2F"},
		{method: "GET", path: "/namespaces/default/workflows?query=x", want: http.StatusSeeOther,
			location: LoginPath + "?next=" + url.QueryEscape("/namespaces/default/workflows?query=x")},
		{method: "HEAD", path: "/namespaces/default/workflows", want: http.StatusSeeOther},
		{method: "GET", path: "/api/v1/namespaces/default/workflows", want: http.StatusUnauthorized},
		{method: "POST", path: "/api/v1/namespaces/default/workflows/run-1", want: http.StatusUnauthorized},
		{method: "POST", path: "/api/v1/namespaces/default/workflows/run-1/signal/gateflow.approval", want: http.StatusUnauthorized},
		{method: "POST", path: "/", want: http.StatusUnauthorized},
		{method: "GET", path: "/api/v1/namespaces/default/workflows", cookies: forged, want: http.StatusUnauthorized},
		// A token the browser sends itself is not a login.
		{method: "GET", path: "/api/v1/namespaces/default/workflows", want: http.StatusUnauthorized,
			header: http.Header{"Authorization": {"Bearer tok-alice"}, TokenHeader: {"tok-alice"}}},
		{method: "GET", path: "/gateflow/login/", want: http.StatusSeeOther},
		{method: "GET", path: "/healthz/", want: http.StatusSeeOther},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp := f.do(t, tc.method, tc.path, nil, tc.header, tc.cookies...)
			assert.Equal(t, tc.want, resp.StatusCode)
			if tc.location != "" {
				assert.Equal(t, tc.location, resp.Header.Get("Location"))
			}
			if tc.want == http.StatusUnauthorized {
				var e struct{ Error string }
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
				assert.Contains(t, e.Error, "needs a login: open "+LoginPath)
			}
		})
	}
	assert.Empty(t, f.back.got(), "nothing without a login reaches the ui-server")

	// The health check does, without a token, and with no credential the client sent.
	resp := f.do(t, "GET", "/healthz", nil, http.Header{"Authorization": {"Bearer tok-alice"}, TokenHeader: {"tok-alice"}})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	got := f.back.got()
	require.Len(t, got, 1)
	assert.Equal(t, "/healthz", got[0].Path)
	assert.Empty(t, got[0].Token)
	assert.Empty(t, got[0].Headers.Get("Authorization"))
}

func TestLoginActsAsThePerson(t *testing.T) {
	f := newFixture(t)

	page := f.do(t, "GET", LoginPath+"?next=%2Fnamespaces%2Fdefault%2Fworkflows", nil, nil)
	assert.Equal(t, http.StatusOK, page.StatusCode)
	assert.Equal(t, "DENY", page.Header.Get("X-Frame-Options"))
	// "no-referrer" would make the browser post the form with Origin "null", refused.
	assert.Equal(t, "same-origin", page.Header.Get("Referrer-Policy"))
	text := body(t, page)
	assert.Contains(t, text, `<textarea id="token" name="token"`)
	assert.Contains(t, text, `value="/namespaces/default/workflows"`)
	assert.Contains(t, text, "flowctl login NAME --dev-key KEY --web "+f.srv.URL)

	refused := f.login(t, "tok-", "/", nil)
	assert.Equal(t, http.StatusUnauthorized, refused.StatusCode)
	assert.Nil(t, sessionCookie(refused))
	assert.Contains(t, body(t, refused), "Login refused: invalid dev token: not a token of this server")

	resp := f.login(t, " Bearer tok-alice\n", "/namespaces/default/workflows", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body(t, resp))
	assert.Equal(t, "/namespaces/default/workflows", resp.Header.Get("Location"))
	c := sessionCookie(resp)
	require.NotNil(t, c)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Equal(t, "/", c.Path)
	assert.Len(t, c.Value, 64)

	// Whatever credentials the browser adds, the ui-server gets alice's token only, and
	// the other cookies (the UI's CSRF cookie) but not the session.
	api := f.do(t, "POST", "/api/v1/namespaces/default/workflows/run-1/signal/s", nil, http.Header{
		"Authorization": {"Bearer tok-bob"}, "Authorization-Extras": {"x"}, TokenHeader: {"tok-bob"},
		"Grpc-Metadata-Authorization": {"Bearer tok-bob"}, "X-Csrf-Token": {"c1"},
	}, c, &http.Cookie{Name: "_csrf", Value: "c1"})
	assert.Equal(t, http.StatusOK, api.StatusCode)
	got := f.back.got()
	require.Len(t, got, 1)
	assert.Equal(t, "tok-alice", got[0].Token)
	assert.Equal(t, []string{"tok-alice"}, got[0].Headers.Values(TokenHeader))
	for _, h := range []string{"Authorization", "Authorization-Extras", "Grpc-Metadata-Authorization"} {
		assert.Empty(t, got[0].Headers.Values(h), h)
	}
	assert.Equal(t, []string{"_csrf=c1"}, got[0].Cookies)
	assert.Equal(t, "c1", got[0].Headers.Get("X-Csrf-Token"), "the UI's CSRF check stays")

	// The login page says who is logged in.
	assert.Contains(t, body(t, f.do(t, "GET", LoginPath, nil, nil, c)), "Logged in as <b>alice</b>")

	// The session ends with the token.
	f.advance(time.Hour)
	assert.Equal(t, http.StatusUnauthorized, f.do(t, "GET", "/api/v1/x", nil, nil, c).StatusCode)
	assert.Len(t, f.back.got(), 1)
}

func TestLogout(t *testing.T) {
	f := newFixture(t)
	c := sessionCookie(f.login(t, "tok-alice", "/", nil))
	require.NotNil(t, c)
	assert.Equal(t, http.StatusMethodNotAllowed, f.do(t, "GET", LogoutPath, nil, nil, c).StatusCode)
	assert.Equal(t, http.StatusForbidden, f.do(t, "POST", LogoutPath, nil, http.Header{"Origin": {"http://evil.example"}}, c).StatusCode)
	assert.Equal(t, http.StatusOK, f.do(t, "GET", "/api/v1/x", nil, nil, c).StatusCode, "still logged in")
	out := f.do(t, "POST", LogoutPath, nil, http.Header{"Origin": {f.srv.URL}}, c)
	assert.Equal(t, http.StatusSeeOther, out.StatusCode)
	assert.Equal(t, LoginPath, out.Header.Get("Location"))
	assert.Equal(t, http.StatusUnauthorized, f.do(t, "GET", "/api/v1/x", nil, nil, c).StatusCode)
}

func TestLoginFromAnotherSiteIsRefused(t *testing.T) {
	f := newFixture(t)
	for _, h := range []http.Header{
		{"Origin": {"http://evil.example"}},
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Sec-Fetch-Site": {"same-site"}},
	} {
		resp := f.login(t, "tok-mallory", "/", h)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%v", h)
		assert.Nil(t, sessionCookie(resp))
	}
	resp := f.login(t, "tok-alice", "/", http.Header{"Origin": {f.srv.URL}, "Sec-Fetch-Site": {"same-origin"}})
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	big := f.login(t, strings.Repeat("a", maxLoginBody), "/", nil)
	assert.Equal(t, http.StatusBadRequest, big.StatusCode)
}

func TestSessionsAreBounded(t *testing.T) {
	g := New("127.0.0.1:1", fakeVerify(time.Now().Add(time.Hour)))
	now := time.Now()
	g.now = func() time.Time { return now }
	var first string
	for i := 0; i < maxSessions+10; i++ {
		id, err := g.open(session{subject: "s", token: "t", expires: now.Add(time.Duration(i+1) * time.Minute)})
		require.NoError(t, err)
		if i == 0 {
			first = id
		}
	}
	assert.Len(t, g.sessions, maxSessions)
	assert.NotContains(t, g.sessions, first, "the session expiring first made room")
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/namespaces/default/workflows?query=a%20b": "/namespaces/default/workflows?query=a%20b",
		"/":                     "/",
		"":                      "/",
		"//evil.example/x":      "/",
		"/\\evil.example":       "/",
		"https://evil.example/": "/",
		"javascript:alert(1)":   "/",
		"/a\r\nLocation: x":     "/",
		"relative":              "/",
	} {
		assert.Equal(t, want, localPath(in), in)
	}
}

// FuzzLocalPath: whatever next a login is given, the browser is sent to a path on this
// server.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "//x", "/\\x", "http://x/", "/a?b#c", "/%2f%2fx", "\t//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := localPath(s)
		u, err := url.Parse(p)
		if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\r\n") {
			t.Fatalf("localPath(%q) = %q", s, p)
		}
		// What a browser resolves the redirect to stays on this origin.
		base, _ := url.Parse("http://127.0.0.1:8233/gateflow/login")
		if r := base.ResolveReference(u); r.Host != base.Host || r.Scheme != base.Scheme {
			t.Fatalf("localPath(%q) = %q leaves the origin: %s", s, p, r)
		}
	})
}

func TestVerifyErrorsAreShown(t *testing.T) {
	g := New("127.0.0.1:1", func(string, time.Time) (devauth.Verified, error) {
		return devauth.Verified{}, errors.New("<b>bad</b>")
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", LoginPath, strings.NewReader("token=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	g.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, rec.Body.String(), "Login refused: &lt;b&gt;bad&lt;/b&gt;", "escaped")
}

func TestMountedHandlersNeedALogin(t *testing.T) {
	f := newFixture(t)
	var got []string
	f.gate.Mount(CodecPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+r.Header.Get(TokenHeader))
		_, _ = io.WriteString(w, "codec")
	}))
	resp := f.do(t, "POST", CodecPath+"/decode", strings.NewReader("{}"), nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Empty(t, got)
	c := sessionCookie(f.login(t, "tok-alice", "/", nil))
	require.NotNil(t, c)
	resp = f.do(t, "POST", CodecPath+"/decode", strings.NewReader("{}"), http.Header{"Authorization": {"Bearer x"}}, c)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "codec", body(t, resp))
	assert.Equal(t, []string{"POST /decode "}, got, "the codec gets the request without credentials")
	assert.Empty(t, f.back.got(), "the ui-server gets none of it")
}
