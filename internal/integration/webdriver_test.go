package integration

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Debian's chromium and chromium-driver packages (`make tools` installs them).
const (
	chromiumPath     = "/usr/bin/chromium"
	chromedriverPath = "/usr/bin/chromedriver"
)

// chromiumArgs run Chromium headless as root without reaching beyond loopback.
var chromiumArgs = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
	"--no-first-run", "--disable-background-networking", "--disable-component-update",
	"--disable-sync", "--window-size=1400,1500",
}

// webDriver is a minimal client of chromedriver's W3C WebDriver HTTP API: one session, the
// few commands the Web UI test needs.
type webDriver struct {
	session string // http://127.0.0.1:PORT/session/ID
	client  *http.Client
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBrowser starts chromedriver and a headless Chromium session, both stopped when the
// test ends. A missing browser fails the test: the Web UI test is part of `make test`.
func startBrowser(t *testing.T) *webDriver {
	t.Helper()
	for _, p := range []string{chromiumPath, chromedriverPath} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: the Web UI test needs Debian's chromium and chromium-driver packages "+
				"(run `make tools`, or apt-get install chromium chromium-driver)", p)
		}
	}
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	var logs lockedBuffer
	cmd := exec.Command(chromedriverPath, fmt.Sprintf("--port=%d", port))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})

	d := &webDriver{session: base, client: &http.Client{Timeout: time.Minute}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status struct {
			Ready bool `json:"ready"`
		}
		if err := d.call("GET", "/status", nil, &status); err == nil && status.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver not ready on port %d:\n%s", port, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	opts := map[string]any{"binary": chromiumPath, "args": append([]string{"--user-data-dir=" + t.TempDir()}, chromiumArgs...)}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome", "goog:chromeOptions": opts,
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	err := d.call("POST", "/session", caps, &created)
	require.NoError(t, err, "start a Chromium session; chromedriver says:\n%s", logs.String())
	d.session = base + "/session/" + created.SessionID
	t.Cleanup(func() { _ = d.call("DELETE", "", nil, nil) })
	return d
}

// call sends one WebDriver command (path relative to the session) and decodes its value.
func (d *webDriver) call(method, path string, body, value any) error {
	var in bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&in).Encode(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequest(method, d.session+path, &in)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("webdriver %s %s: %s: %w", method, path, resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		_ = json.Unmarshal(out.Value, &e)
		return fmt.Errorf("webdriver %s %s: %s: %s", method, path, e.Error, firstLine(e.Message))
	}
	if value == nil {
		return nil
	}
	return json.Unmarshal(out.Value, value)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// open navigates to url and returns once the document has loaded (a single-page app may
// still be fetching its data: poll text for what you expect).
func (d *webDriver) open(url string) error {
	return d.call("POST", "/url", map[string]string{"url": url}, nil)
}

// textScript returns the page's rendered text and that of its same-origin frames, where the
// Temporal Web UI renders markdown (summaries, details, current details).
const textScript = `const parts = [document.body.innerText];
for (const f of document.querySelectorAll('iframe')) {
  try { parts.push(f.contentDocument.body.innerText); } catch (e) {}
}
return parts.join('\n');`

// text is what a person reads on the page: its rendered text, frames included.
func (d *webDriver) text() (string, error) {
	var s string
	err := d.call("POST", "/execute/sync", map[string]any{"script": textScript, "args": []any{}}, &s)
	return s, err
}

// screenshot writes the visible part of the page to file as PNG.
func (d *webDriver) screenshot(file string) error {
	var b64 string
	if err := d.call("GET", "/screenshot", nil, &b64); err != nil {
		return err
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return err
	}
	return os.WriteFile(file, png, 0o644)
}
