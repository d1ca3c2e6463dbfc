package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/internal/devauth"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/uigate"
	"github.com/gateflow/gateflow/runs"
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
	srv, admin, mint := startAuthUIServer(t, nil)
	now := time.Now()
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
	_, err := admin.DescribeWorkflowExecution(ctx, "webui-bare", "")
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

// TestWebUIUnderAuthServesTheCodecBehindTheLogin: under auth the UI's codec server (which
// reads and writes the blob store) is on the UI's port, behind its login, not on a port of
// its own that anyone could call.
func TestWebUIUnderAuthServesTheCodecBehindTheLogin(t *testing.T) {
	store, err := blob.Open(context.Background(), mustFileURL(t, filepath.Join(t.TempDir(), "blobs")))
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close() })
	codec, err := blob.NewCodec(store, blob.CodecOptions{Threshold: 64})
	require.NoError(t, err)
	srv, _, mint := startAuthUIServer(t, codec)
	require.Equal(t, srv.UIURL()+uigate.CodecPath, srv.CodecURL())

	enc, err := codec.Encode([]*commonpb.Payload{mustPayload(t, strings.Repeat("secret", 100))})
	require.NoError(t, err)
	require.True(t, blob.IsRef(enc[0]))
	ref, err := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
	require.NoError(t, err)
	decode := func(c *uiClient) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.CodecURL()+"/decode", bytes.NewReader(ref))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Namespace", "default")
		resp, err := c.http.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}

	bare := newUIClient(t, srv.UIURL())
	code, body := decode(bare)
	assert.Equal(t, http.StatusUnauthorized, code, "no login, no blob: %s", body)
	code, body = bare.call(http.MethodGet, "/api/v1/settings", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "settings: %s", body)

	alice := newUIClient(t, srv.UIURL())
	code, body = alice.login(mint("alice"))
	require.Equal(t, http.StatusSeeOther, code, body)
	code, body = alice.call(http.MethodGet, "/api/v1/settings", nil)
	require.Equal(t, http.StatusOK, code, body)
	var settings struct{ Codec struct{ Endpoint string } }
	require.NoError(t, json.Unmarshal([]byte(body), &settings))
	assert.Equal(t, srv.CodecURL(), settings.Codec.Endpoint, "the UI calls the codec on its own origin")
	code, body = decode(alice)
	require.Equal(t, http.StatusOK, code, body)
	var out struct {
		Payloads []json.RawMessage `json:"payloads"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.Len(t, out.Payloads, 1)
	var p commonpb.Payload
	require.NoError(t, protojson.Unmarshal(out.Payloads[0], &p))
	assert.Equal(t, `"`+strings.Repeat("secret", 100)+`"`, string(p.GetData()))
}

// startAuthUIServer starts a dev server with auth and a Web UI, stopped when the test ends,
// with codec (nil: none) as the UI's codec, and returns it, an admin client of it, and a function minting a person's (or, with
// permissions, a worker's or admin's) token of its key.
func startAuthUIServer(t *testing.T, codec converter.PayloadCodec) (*devserver.Server, client.Client, func(sub string, perms ...string) string) {
	t.Helper()
	key, _, err := devauth.LoadOrCreate(filepath.Join(t.TempDir(), "key.json"))
	require.NoError(t, err)
	mint := func(sub string, perms ...string) string {
		tok, err := key.Mint(devauth.Token{Subject: sub, Permissions: perms, TTL: time.Hour}, time.Now())
		require.NoError(t, err)
		return tok
	}
	srv, err := devserver.Start(devserver.Options{UIPort: freePort(t), Codec: codec,
		Auth: &devserver.Auth{Key: key.Public(), KeyID: key.ID, Token: mint("admin", devauth.SystemScope+":"+devauth.RoleAdmin)}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	admin, err := client.NewLazyClient(client.Options{HostPort: srv.FrontendAddress(), Namespace: srv.Namespace(),
		Credentials:       client.NewAPIKeyStaticCredentials(mint("ops", devauth.SystemScope+":"+devauth.RoleAdmin)),
		ConnectionOptions: client.ConnectionOptions{TLSDisabled: true}, Logger: logging.NewSDKLogger(io.Discard, "off")})
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	return srv, admin, mint
}

// TestWebUIUnderAuthLogsInAndActsAsThePerson is the Web UI of `flow-worker --dev --auth` in
// headless Chromium: without a login a run's page shows the login page, not the run; after
// pasting alice's dev token there the UI shows the run and approves its gate as alice (the
// server's Authorizer accepts a vote "by" alice only from alice); logging out shows the
// login page again, and the link `flowctl login bob --web URL` prints logs the browser in
// as bob. Screenshots go to test-artifacts/.
func TestWebUIUnderAuthLogsInAndActsAsThePerson(t *testing.T) {
	browser := startBrowser(t)
	workerBin, ctlBin := binaries(t)
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "dev-key.json")
	address, ui := startDevWorker(t, workerBin, "--auth", "--auth-dev-key", keyPath)
	ctl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ctlBin, append([]string{"--address", address}, args...)...)
		cmd.Env = append(os.Environ(), "GATEFLOW_DEV_LOGIN="+filepath.Join(dir, "login.json"), "FLOW_USER=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "flowctl %s: %s", strings.Join(args, " "), stderr.String())
		return string(out)
	}
	show := func(id string) runs.Description {
		t.Helper()
		var d runs.Description
		out := ctl("show", id, "-o", "json")
		require.NoError(t, flowctl.DecodeJSON([]byte(out), &d), out)
		return d
	}
	ctl("login", "alice", "--dev-key", keyPath)
	var run runs.Description
	out := ctl("start", "rollout", "--input", `{"version":"3.1.4"}`, "-o", "json")
	require.NoError(t, flowctl.DecodeJSON([]byte(out), &run), out)
	require.Eventually(t, func() bool { return show(run.ID).Status == runs.StatusAwaitingApproval }, time.Minute, 200*time.Millisecond,
		"rollout %s waits for its sign-off", run.ID)
	artifacts, err := filepath.Abs(filepath.Join("..", "..", "test-artifacts"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(artifacts, 0o755))
	page := fmt.Sprintf("%s/namespaces/default/workflows/%s/%s", ui, run.ID, run.RunID)

	// No login: the login page, not the run.
	loginPage := func(shot string) {
		t.Helper()
		checkPage(t, browser, page+"/user-metadata", filepath.Join(artifacts, shot), `gateflow Web UI login`, `needs a login`)
		where, err := eval[string](browser, `location.pathname + location.search`)
		require.NoError(t, err)
		assert.Equal(t, uigate.LoginPath+"?next="+url.QueryEscape(strings.TrimPrefix(page, ui)+"/user-metadata"), where)
		text, err := browser.text()
		require.NoError(t, err)
		assert.NotContains(t, text, "Sign off the rollout", "nothing of the run without a login")
	}
	loginPage("webui-auth-login.png")

	// Paste alice's token: the login sends the browser on to the run's page.
	m := regexp.MustCompile(`export TEMPORAL_API_KEY=(\S+)`).FindStringSubmatch(ctl("login", "alice", "--dev-key", keyPath, "--export"))
	require.Len(t, m, 2)
	require.NoError(t, browser.do(chromedp.SetValue(chromedp.ID("token"), m[1], chromedp.NodeVisible), chromedp.Click(chromedp.ID("login"), chromedp.NodeVisible)))
	waitForPath(t, browser, func(p string) bool { return p == strings.TrimPrefix(page, ui)+"/user-metadata" }, "the login leads to the run's page")
	checkPage(t, browser, page+"/user-metadata", filepath.Join(artifacts, "webui-auth-details.png"),
		`Approval sign-off: Sign off the rollout of 3\.1\.4\?`, `Send an Update gateflow\.approval with \{"gate":"sign-off","vote":"approve","by":""\}`)

	// Alice approves through Send an Update, as herself.
	payload := `{"gate":"sign-off","vote":"approve","by":"alice"}`
	sendUpdateThroughUI(t, browser, page, payload, filepath.Join(artifacts, "webui-auth-dialog.png"))
	var d runs.Description
	require.Eventually(t, func() bool { d = show(run.ID); return d.Status.Terminal() }, 2*time.Minute, 250*time.Millisecond,
		"rollout %s ends after the sign-off", run.ID)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	require.NotNil(t, d.State)
	require.Len(t, d.State.Gates, 1)
	require.Len(t, d.State.Gates[0].Votes, 1)
	assert.Equal(t, "alice", d.State.Gates[0].Votes[0].By)
	require.NotNil(t, d.State.Gates[0].Decision)
	assert.Equal(t, approval.Approved, d.State.Gates[0].Decision.Outcome)

	// The login page names who is logged in; logging out shows the login page again.
	checkPage(t, browser, ui+uigate.LoginPath, filepath.Join(artifacts, "webui-auth-logged-in.png"), `Logged in as alice`)
	require.NoError(t, browser.do(chromedp.Click(chromedp.ID("logout"), chromedp.NodeVisible)))
	require.Eventually(t, func() bool {
		text, err := browser.text()
		return err == nil && strings.Contains(text, "gateflow Web UI login") && !strings.Contains(text, "Logged in as")
	}, time.Minute, 200*time.Millisecond, "logged out")
	loginPage("webui-auth-logged-out.png")

	// The link `flowctl login --web` prints logs the browser in (as bob).
	m = regexp.MustCompile(`Web UI: open (\S+) to log a browser in as bob`).FindStringSubmatch(ctl("login", "bob", "--dev-key", keyPath, "--web", ui))
	require.Len(t, m, 2)
	require.NoError(t, browser.open(m[1]))
	waitForPath(t, browser, func(p string) bool { return !strings.HasPrefix(p, "/gateflow/") }, "the link logs in and leads to the UI")
	checkPage(t, browser, ui+uigate.LoginPath, filepath.Join(artifacts, "webui-auth-link.png"), `Logged in as bob`)
}

// waitForPath waits up to a minute for the page's path to satisfy ok, and fails with what
// the page shows when it does not.
func waitForPath(t *testing.T, browser *browser, ok func(string) bool, what string) {
	t.Helper()
	var where, text string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if where, err = eval[string](browser, `location.pathname`); err == nil && ok(where) {
			return
		}
		text, _ = browser.text()
	}
	t.Fatalf("%s: the page is still %s, showing:\n%s", what, where, text)
}
