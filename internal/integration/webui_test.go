package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWebUIShowsStepsCostsAndPendingApproval opens runs of the example flows in the
// Temporal Web UI served by `flow-worker --dev`, in headless Chromium, and checks that what
// gateflow writes for the UI is what a person sees: the steps of a release run (activity
// summaries on the timeline, the step table in Current Details), its cost, and the pending
// approval of a ship run with the command that answers it. Screenshots of the pages are
// kept in test-artifacts/ at the repository root, also when the test fails.
func TestWebUIShowsStepsCostsAndPendingApproval(t *testing.T) {
	browser := startBrowser(t)
	workerBin, ctlBin := binaries(t)
	address, ui := startDevWorker(t, workerBin)
	ctl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ctlBin, append([]string{"--address", address}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "flowctl %s: %s", strings.Join(args, " "), stderr.String())
		return string(out)
	}
	describe := func(out string) runs.Description {
		t.Helper()
		var d runs.Description
		require.NoError(t, flowctl.DecodeJSON([]byte(out), &d), out)
		return d
	}

	release := describe(ctl("start", "release", "--input", `{"version":"1.2.3"}`, "--wait", "-o", "json"))
	require.Equal(t, runs.StatusCompleted, release.Status)

	ship := describe(ctl("start", "ship", "--input", `{"version":"2.0.0"}`, "-o", "json"))
	ctl("input", ship.ID, "release-notes", "--as", "alice", "--data", `{"summary":"Faster pages for all","risk":"low"}`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		status := describe(ctl("show", ship.ID, "-o", "json")).Status
		if status == runs.StatusAwaitingApproval {
			break
		}
		require.True(t, time.Now().Before(deadline), "ship run %s is %s, not waiting for the approval", ship.ID, status)
	}

	artifacts, err := filepath.Abs(filepath.Join("..", "..", "test-artifacts"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(artifacts, 0o755))
	runPage := func(d runs.Description, tab string) string {
		return fmt.Sprintf("%s/namespaces/default/workflows/%s/%s/%s", ui, d.ID, d.RunID, tab)
	}

	// Every step's activity summary on the timeline (the child run shows its StaticSummary).
	checkPage(t, browser, runPage(release, "timeline"), filepath.Join(artifacts, "webui-release-timeline.png"),
		`build \(shell\)`, `unit \(shell\)`, `lint \(shell\)`, `review \(agent\)`, `smoke: child smoke of `+release.ID)

	// Current Details (the User Metadata tab): the step table and the cost.
	checkPage(t, browser, runPage(release, "user-metadata"), filepath.Join(artifacts, "webui-release.png"),
		`release: Build, check, review and smoke-test a release`, // StaticSummary
		`release — completed`,
		`Cost \$0\.0154 · 15180 tokens`,
		`(?m)^build\tshell\tcompleted\t`,
		`(?m)unit\tshell\tcompleted\t`,
		`(?m)lint\tshell\tcompleted\t`,
		`(?m)^review\tagent\tcompleted\t1\t[^\t]+\t\$0\.0154\t`,
		`(?m)^smoke\tchild\tcompleted\t`)

	// The pending approval of the ship run, with the command that answers it.
	checkPage(t, browser, runPage(ship, "user-metadata"), filepath.Join(artifacts, "webui-ship.png"),
		`ship — awaiting_approval`,
		`Waiting for people`,
		`Approval ship: Ship 2\.0\.0\? Risk: low — 0 of 2 approvals from group:release`,
		`flowctl approve `+regexp.QuoteMeta(ship.ID)+` ship`,
		`(?m)^release-notes\tinput\tcompleted\t1\t[^\t]+\t-\tanswered by alice`,
		`(?m)^ship\tapproval\trunning\t`)
}

// checkPage opens url and waits until the page's text matches every pattern (the Web UI
// renders after fetching its data), then saves a screenshot to file, whether or not
// everything appeared, and reports the patterns that never matched.
func checkPage(t *testing.T, browser *webDriver, url, file string, patterns ...string) {
	t.Helper()
	require.NoError(t, browser.open(url))
	var text string
	var missing []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		text, err = browser.text()
		require.NoError(t, err, url)
		missing = missing[:0]
		for _, p := range patterns {
			if !regexp.MustCompile(p).MatchString(text) {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err := browser.screenshot(file); err != nil {
		t.Errorf("screenshot of %s: %v", url, err)
	} else {
		t.Logf("screenshot of %s: %s", url, file)
	}
	assert.Empty(t, missing, "%s does not show these (screenshot %s); its text:\n%s", url, file, text)
}

// startDevWorker runs `flow-worker --dev` (in-memory store) on free ports, with the extra
// flags args, until the test ends and returns the Temporal address and the Web UI's base URL.
func startDevWorker(t *testing.T, bin string, args ...string) (address, ui string) {
	t.Helper()
	port, uiPort := freePort(t), freePort(t)
	cmd := exec.Command(bin, append([]string{"--dev", "--port", fmt.Sprint(port), "--ui-port", fmt.Sprint(uiPort)}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	// exited is closed once the process ended, with its error in waitErr: the early-exit
	// check and the cleanup both wait on it.
	exited := make(chan struct{})
	var waitErr error
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "flow-worker: ready") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("flow-worker exited early: %v\n%s", waitErr, stderr.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("flow-worker not ready in time:\n%s", stderr.String())
	}
	return fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("http://127.0.0.1:%d", uiPort)
}
