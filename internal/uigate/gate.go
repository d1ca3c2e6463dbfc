package uigate

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gateflow/gateflow/internal/devauth"
)

const (
	// LoginPath is the gate's login page: a form to paste a dev token, and the link
	// `flowctl login NAME --web URL` prints (the token in the fragment, never sent in a URL).
	LoginPath = "/gateflow/login"
	// LogoutPath ends the browser's session (POST).
	LogoutPath = "/gateflow/logout"
	// CodecPath is where the server's codec (POST /decode, /encode) is served to logged-in
	// browsers (Mount), instead of on a port of its own that would need no login.
	CodecPath = "/gateflow/codec"
	// SessionCookie names the session: an opaque random ID, HttpOnly, SameSite=Strict.
	SessionCookie = "gateflow_session"

	// TokenHeader carries the session's token from the gate to the ui-server; the gate
	// drops it (and every other credential header) from what the browser sent.
	TokenHeader = "X-Gateflow-Ui-Token"
	// maxSessions bounds the sessions kept; the one expiring first makes room.
	maxSessions = 1024
	// maxLoginBody bounds a login form.
	maxLoginBody = 16 << 10
)

// session is one browser's login.
type session struct {
	subject string
	token   string
	expires time.Time
}

// Gate is the login gate in front of the Web UI (see the package doc).
type Gate struct {
	verify func(token string, now time.Time) (devauth.Verified, error)
	proxy  http.Handler
	now    func() time.Time

	// mounts are handlers served by the gate itself, to logged-in browsers, by path prefix.
	mounts map[string]http.Handler

	mu       sync.Mutex
	sessions map[string]session
}

// Mount serves h, with prefix stripped from the path, for the requests under prefix+"/" of
// logged-in browsers (without the credentials they sent); without a login they are refused
// as any other. Mount before serving.
func (g *Gate) Mount(prefix string, h http.Handler) {
	g.mounts[strings.TrimRight(prefix, "/")] = http.StripPrefix(strings.TrimRight(prefix, "/"), h)
}

// New fronts the ui-server at backend ("host:port"), accepting the tokens verify accepts
// (verify gets the token without "Bearer ").
func New(backend string, verify func(token string, now time.Time) (devauth.Verified, error)) *Gate {
	target := &url.URL{Scheme: "http", Host: backend}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the ui-server's redirects and CORS see the browser's host
	}}
	return &Gate{verify: verify, proxy: proxy, now: time.Now, sessions: map[string]session{}, mounts: map[string]http.Handler{}}
}

// ServeHTTP implements http.Handler.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case LoginPath:
		g.login(w, r)
		return
	case LogoutPath:
		g.logout(w, r)
		return
	case "/healthz":
		// Health checks need no login; nothing forwarded without a session carries a token.
		g.proxy.ServeHTTP(w, withCredentials(r, ""))
		return
	}
	s, ok := g.current(r)
	if !ok {
		refuse(w, r)
		return
	}
	for prefix, h := range g.mounts {
		if strings.HasPrefix(r.URL.Path, prefix+"/") {
			h.ServeHTTP(w, withCredentials(r, ""))
			return
		}
	}
	g.proxy.ServeHTTP(w, withCredentials(r, s.token))
}

// refuse answers a request without a login: a page load is sent to the login page, an API
// call or a write gets 401.
func refuse(w http.ResponseWriter, r *http.Request) {
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasPrefix(r.URL.Path, "/api/") {
		http.Redirect(w, r, LoginPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	_ = json.NewEncoder(w).Encode(map[string]string{
		"error": "gateflow: the Web UI of `flow-worker --dev --auth` needs a login: open " + LoginPath,
	})
}

// withCredentials is r as the ui-server gets it: without any credential the browser sent
// (Authorization headers, gRPC metadata headers, the session cookie, a forged token header)
// and, when token is set, with token in TokenHeader.
func withCredentials(r *http.Request, token string) *http.Request {
	out := r.Clone(r.Context())
	for name := range out.Header {
		switch c := http.CanonicalHeaderKey(name); {
		case c == "Authorization", c == "Authorization-Extras", c == TokenHeader, c == "Cookie",
			strings.HasPrefix(c, "Grpc-Metadata-"):
			out.Header.Del(name)
		}
	}
	for _, c := range r.Cookies() {
		if c.Name != SessionCookie {
			out.AddCookie(c)
		}
	}
	if token != "" {
		out.Header.Set(TokenHeader, token)
	}
	return out
}

// current is the valid session r's cookie names.
func (g *Gate) current(r *http.Request) (session, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return session{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sessions[c.Value]
	if ok && !g.now().Before(s.expires) {
		delete(g.sessions, c.Value)
		return session{}, false
	}
	return s, ok
}

// open keeps a new session and returns its ID.
func (g *Gate) open(s session) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("uigate: session ID: %w", err)
	}
	id := hex.EncodeToString(b[:])
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.sessions) >= maxSessions {
		g.evictLocked()
	}
	g.sessions[id] = s
	return id, nil
}

// evictLocked drops the expired sessions, or else the one that expires first.
func (g *Gate) evictLocked() {
	now := g.now()
	first := ""
	for id, s := range g.sessions {
		if !now.Before(s.expires) {
			delete(g.sessions, id)
			continue
		}
		if first == "" || s.expires.Before(g.sessions[first].expires) {
			first = id
		}
	}
	if len(g.sessions) >= maxSessions {
		delete(g.sessions, first)
	}
}

// sameOrigin refuses a form posted from another site (login and logout CSRF).
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		return false
	}
	return true
}

// login serves the login page (GET) and logs in with a pasted token (POST).
func (g *Gate) login(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		page := loginPage{Next: next, Base: "http://" + r.Host}
		if s, ok := g.current(r); ok {
			page.Subject = s.subject
		}
		writeLoginPage(w, http.StatusOK, page)
	case http.MethodPost:
		if !sameOrigin(r) {
			http.Error(w, "gateflow: a login must be posted from the login page", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
		if err := r.ParseForm(); err != nil {
			writeLoginPage(w, http.StatusBadRequest, loginPage{Next: next, Base: "http://" + r.Host, Error: "the form could not be read: " + err.Error()})
			return
		}
		if n := r.PostForm.Get("next"); n != "" {
			next = localPath(n)
		}
		g.loginWith(w, r, r.PostForm.Get("token"), next)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// loginWith verifies token and opens a session for its subject, then sends the browser
// to next.
func (g *Gate) loginWith(w http.ResponseWriter, r *http.Request, token, next string) {
	token = devauth.BearerToken(token)
	v, err := g.verify(token, g.now())
	if err != nil {
		writeLoginPage(w, http.StatusUnauthorized, loginPage{Next: next, Base: "http://" + r.Host, Error: err.Error()})
		return
	}
	id, err := g.open(session{subject: v.Subject, token: token, expires: v.Expires})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: id, Path: "/", Expires: v.Expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session of the browser (POST only) and shows the login page again.
func (g *Gate) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, "gateflow: a logout must be posted from the login page", http.StatusForbidden)
		return
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		g.mu.Lock()
		delete(g.sessions, c.Value)
		g.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, LoginPath, http.StatusSeeOther)
}

// localPath is p when it is a path on this server, else "/" (no open redirect).
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") ||
		strings.ContainsAny(p, "\x00\r\n\t\\") {
		return "/"
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return p
}
