package integration

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/internal/devauth"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/uigate"
)

// uiClient is a bare HTTP client of the Web UI's port: it keeps cookies, follows no
// redirects, and double-submits a CSRF token of its own (what the UI's CSRF check compares).
type uiClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func newUIClient(t *testing.T, base string) *uiClient {
	jar := &cookieJar{cookies: map[string]*http.Cookie{}}
	cl := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &uiClient{t: t, base: base, http: cl}
}

// cookieJar keeps every cookie it is given for any URL (one server).
type cookieJar struct{ cookies map[string]*http.Cookie }

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) {
	for _, c := range cs {
		if c.MaxAge < 0 {
			delete(j.cookies, c.Name)
			continue
		}
		j.cookies[c.Name] = c
	}
}

func (j *cookieJar) Cookies(*url.URL) []*http.Cookie {
	out := []*http.Cookie{{Name: "_csrf", Value: "bare-client-csrf"}}
	for _, c := range j.cookies {
		if c.Name != "_csrf" {
			out = append(out, c)
		}
	}
	return out
}

// call sends method path with body (JSON when not nil) and returns the status and body.
func (c *uiClient) call(method, path string, body any) (int, string) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(c.t, err)
		r = strings.NewReader(string(raw))
	}
	req, err := http.NewRequest(method, c.base+path, r)
	require.NoError(c.t, err)
	req.Header.Set("X-CSRF-Token", "bare-client-csrf")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusSeeOther {
		return resp.StatusCode, resp.Header.Get("Location")
	}
	return resp.StatusCode, string(out)
}

// login posts token to the gate's login page as its form does.
func (c *uiClient) login(token string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+uigate.LoginPath, strings.NewReader(url.Values{"token": {token}, "next": {"/"}}.Encode()))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// jsonPayloads is v as the Temporal HTTP API's payloads (json/plain).
func jsonPayloads(t *testing.T, v any) map[string]any {
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return map[string]any{"payloads": []any{map[string]any{
		"metadata": map[string]string{"encoding": base64.StdEncoding.EncodeToString([]byte("json/plain"))},
		"data":     base64.StdEncoding.EncodeToString(raw),
	}}}
}

// TestWebUIUnderAuthNeedsALogin is issue 31's item 2 on the wire: on the Web UI's port of a
// dev server with auth, a bare HTTP client (with a CSRF token of its own) can neither list,
// start nor signal runs — nothing starts; once logged in with alice's dev token it can, as
// alice: history names alice, and a decision in someone else's name is refused.
func TestWebUIUnderAuthNeedsALogin(t *testing.T) {
	key, _, err := devauth.LoadOrCreate(filepath.Join(t.TempDir(), "key.json"))
	require.NoError(t, err)
	now := time.Now()
	mint := func(sub string, perms ...string) string {
		tok, err := key.Mint(devauth.Token{Subject: sub, Permissions: perms, TTL: time.Hour}, now)
		require.NoError(t, err)
		return tok
	}
	srv, err := devserver.Start(devserver.Options{UIPort: freePort(t),
		Auth: &devserver.Auth{Key: key.Public(), KeyID: key.ID, Token: mint("admin", devauth.SystemScope+":"+devauth.RoleAdmin)}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	admin, err := client.NewLazyClient(client.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(),
		Credentials:       client.NewAPIKeyStaticCredentials(mint("ops", devauth.SystemScope+":"+devauth.RoleAdmin)),
		ConnectionOptions: client.ConnectionOptions{TLSDisabled: true}, Logger: logging.NewSDKLogger(io.Discard, "off")})
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	ctx := ctxT(t, 2*time.Minute)

	start := func(id string) map[string]any {
		return map[string]any{"workflowId": id, "workflowType": map[string]string{"name": "webui-probe"},
			"taskQueue": map[string]string{"name": "webui-auth"}, "requestId": id}
	}
	signalPath := func(id, name string) string {
		return fmt.Sprintf("/api/v1/namespaces/default/workflows/%s/signal/%s", id, name)
	}

	// Without a login: the page sends to the login page, the API answers 401, nothing starts.
	bare := newUIClient(t, srv.UIURL())
	code, loc := bare.call(http.MethodGet, "/", nil)
	assert.Equal(t, http.StatusSeeOther, code)
	assert.Equal(t, uigate.LoginPath+"?next=%2F", loc)
	code, body := bare.call(http.MethodGet, "/api/v1/namespaces/default/workflows", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "list: %s", body)
	code, body = bare.call(http.MethodPost, "/api/v1/namespaces/default/workflows/webui-bare", start("webui-bare"))
	assert.Equal(t, http.StatusUnauthorized, code, "start: %s", body)
	code, body = bare.call(http.MethodPost, signalPath("webui-bare", protocol.SignalApproval),
		map[string]any{"input": jsonPayloads(t, map[string]string{"gate": "ship", "vote": "reject", "by": "alice"})})
	assert.Equal(t, http.StatusUnauthorized, code, "signal: %s", body)
	_, err = admin.DescribeWorkflowExecution(ctx, "webui-bare", "")
	var nf *serviceerror.NotFound
	assert.ErrorAs(t, err, &nf, "a refused start starts nothing")

	// A token of another key, or garbage, is no login.
	other := mustOtherKey(t)
	forged, err := other.Mint(devauth.Token{Subject: "alice"}, now)
	require.NoError(t, err)
	for _, tok := range []string{forged, "not-a-token", ""} {
		code, body = bare.login(tok)
		assert.Equal(t, http.StatusUnauthorized, code)
		assert.Contains(t, body, "Login refused: invalid dev token")
	}

	// Logged in as alice: the UI lists, starts and signals, as alice.
	alice := newUIClient(t, srv.UIURL())
	code, loc = alice.login(mint("alice"))
	require.Equal(t, http.StatusSeeOther, code, loc)
	code, body = alice.call(http.MethodGet, "/api/v1/namespaces/default/workflows", nil)
	assert.Equal(t, http.StatusOK, code, "list: %s", body)
	code, body = alice.call(http.MethodPost, "/api/v1/namespaces/default/workflows/webui-alice", start("webui-alice"))
	require.Equal(t, http.StatusOK, code, "start: %s", body)
	code, body = alice.call(http.MethodPost, signalPath("webui-alice", protocol.SignalApproval),
		map[string]any{"input": jsonPayloads(t, map[string]string{"gate": "ship", "vote": "approve", "by": "alice"})})
	assert.Equal(t, http.StatusOK, code, "alice's own vote: %s", body)
	code, body = alice.call(http.MethodPost, signalPath("webui-alice", protocol.SignalApproval),
		map[string]any{"input": jsonPayloads(t, map[string]string{"gate": "ship", "vote": "reject", "by": "bob"})})
	assert.Equal(t, http.StatusForbidden, code, "a vote in bob's name: %s", body)
	assert.Contains(t, body, `by \"bob\" refused: the token is \"alice\"'s`)

	principals := map[enumspb.EventType][]string{}
	it := admin.GetWorkflowHistory(ctx, "webui-alice", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		principals[e.GetEventType()] = append(principals[e.GetEventType()], e.GetPrincipal().GetName())
	}
	assert.Equal(t, []string{"alice"}, principals[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED], "started by alice, not the UI")
	assert.Equal(t, []string{"alice"}, principals[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED], "alice's vote only; bob's left nothing")

	// Logged out: refused again.
	req, err := http.NewRequest(http.MethodPost, srv.UIURL()+uigate.LogoutPath, nil)
	require.NoError(t, err)
	resp, err := alice.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	code, _ = alice.call(http.MethodGet, "/api/v1/namespaces/default/workflows", nil)
	assert.Equal(t, http.StatusUnauthorized, code)
}
