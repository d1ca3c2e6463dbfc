package integration

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/proc"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium package (`make tools` installs it). chromedp drives
// it over the DevTools protocol: no chromedriver.
const chromiumPath = "/usr/bin/chromium"

// browserOptions run Chromium headless as root, in a fresh profile, without reaching
// beyond loopback.
func browserOptions(profile string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.UserDataDir(profile),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1500),
	}
}

// browser is one headless Chromium tab, driven with chromedp.
type browser struct {
	ctx  context.Context
	logs *proc.Buffer
}

// startBrowser starts headless Chromium with one tab, stopped when the test ends. A
// missing browser fails the test: the Web UI tests are part of `make test`.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s is missing: the Web UI tests need Debian's chromium package (run `make tools`, or apt-get install chromium)", chromiumPath)
	}
	logs := &proc.Buffer{}
	opts := append(browserOptions(t.TempDir()), chromedp.CombinedOutput(logs))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the context it gets:
	// the tab's own, not one with a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v\n%s", err, logs.String())
	}
	return &browser{ctx: ctx, logs: logs}
}

// do runs the actions in the tab, each call bounded by a minute.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// clickUntil clicks target until shown is visible: a single-page app may draw a button
// before it answers clicks, and a menu may still be fading in or out. A click is made only
// while shown is not visible yet (a second click on a menu's button would close it again),
// and not again before the last one had 5 s to show it. It gives up after within with the
// last error.
func (b *browser) clickUntil(target, shown chromedp.JSPath, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if b.isVisible(shown) {
			return nil
		}
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		err := chromedp.Do(ctx, chromedp.Click(target, chromedp.NodeVisible), chromedp.WaitVisible(shown))
		cancel()
		if err == nil || b.isVisible(shown) {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// isVisible reports whether the element at path (a JSPath that finds visible elements
// only, such as webui_test.go's visible) is on the page now.
func (b *browser) isVisible(path chromedp.JSPath) bool {
	ok, err := eval[bool](b, "!!("+string(path)+")")
	return err == nil && ok
}

// eval evaluates the JavaScript expression in the page (awaiting a promise it returns).
func eval[T any](b *browser, expression string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expression, chromedp.EvalAwaitPromise))
}

// open navigates to url and returns once the document has loaded (a single-page app may
// still be fetching its data: poll text for what you expect).
func (b *browser) open(url string) error {
	if err := b.do(chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("open %s: %w", url, err)
	}
	return nil
}

// textScript is the page's rendered text and that of its same-origin frames, where the
// Temporal Web UI renders markdown (summaries, details, current details).
const textScript = `(() => {
  const parts = [document.body.innerText];
  for (const f of document.querySelectorAll('iframe')) {
    try { parts.push(f.contentDocument.body.innerText); } catch (e) {}
  }
  return parts.join('\n');
})()`

// text is what a person reads on the page: its rendered text, frames included.
func (b *browser) text() (string, error) {
	return eval[string](b, textScript)
}

// screenshot writes the visible part of the page to file as PNG.
func (b *browser) screenshot(file string) error {
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	return os.WriteFile(file, png, 0o644)
}
