package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
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

	"github.com/chromedp/chromedp/kb"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/proc"
	"github.com/gateflow/gateflow/runs"
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
func checkPage(t *testing.T, page *browser, url, file string, patterns ...string) {
	t.Helper()
	require.NoError(t, page.open(url))
	var text string
	var missing []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		text, err = page.text()
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
	if err := page.screenshot(file); err != nil {
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
	var stderr proc.Buffer
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

// uiPayloadText finds, in the rendered current details, the JSON shown for the Web UI's
// "Send an Update" of the approval Update.
var uiPayloadText = regexp.MustCompile(`Send an Update gateflow\.approval with (\{[^\n]*?\}) \(vote:`)

// TestWebUIApprovesAGateThroughSendAnUpdate decides a rollout's sign-off gate the way a
// person does in the Temporal Web UI served by `flow-worker --dev`, in headless Chromium:
// read the JSON the run's current details show, open "More Actions" → "Send an Update",
// pick gateflow.approval (listed with its description), paste the JSON with a name in
// "by", submit. The real server then shows the gate approved by that name, unverified
// (the UI sends no signature), and the run completed. Screenshots go to test-artifacts/.
func TestWebUIApprovesAGateThroughSendAnUpdate(t *testing.T) {
	browser := startBrowser(t)
	workerBin, ctlBin := binaries(t)
	address, ui := startDevWorker(t, workerBin)
	show := func(id string) runs.Description {
		t.Helper()
		out, err := exec.Command(ctlBin, "--address", address, "show", id, "-o", "json").Output()
		require.NoError(t, err, "flowctl show %s", id)
		var d runs.Description
		require.NoError(t, flowctl.DecodeJSON(out, &d), string(out))
		return d
	}
	out, err := exec.Command(ctlBin, "--address", address, "start", "rollout", "--input", `{"version":"3.1.4"}`, "-o", "json").Output()
	require.NoError(t, err, "flowctl start rollout")
	var run runs.Description
	require.NoError(t, flowctl.DecodeJSON(out, &run), string(out))
	require.Eventually(t, func() bool { return show(run.ID).Status == runs.StatusAwaitingApproval }, time.Minute, 200*time.Millisecond,
		"rollout %s waits for its sign-off", run.ID)

	artifacts, err := filepath.Abs(filepath.Join("..", "..", "test-artifacts"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(artifacts, 0o755))
	page := fmt.Sprintf("%s/namespaces/default/workflows/%s/%s", ui, run.ID, run.RunID)

	// The details say what to paste, and what identity it gets.
	checkPage(t, browser, page+"/user-metadata", filepath.Join(artifacts, "webui-decide-details.png"),
		`Approval sign-off: Sign off the rollout of 3\.1\.4\?`,
		`Send an Update gateflow\.approval with \{"gate":"sign-off","vote":"approve","by":""\}`,
		`counts as unverified, by the name you type`)
	text, err := browser.text()
	require.NoError(t, err)
	m := uiPayloadText.FindStringSubmatch(text)
	require.NotNil(t, m, "the details show the JSON to paste:\n%s", text)
	payload := strings.Replace(m[1], `"by":""`, `"by":"alice"`, 1)
	require.NotEqual(t, m[1], payload, "the shown JSON has an empty by to fill in")
	var vote approval.Vote
	require.NoError(t, json.Unmarshal([]byte(payload), &vote), "the shown JSON is a vote: %s", payload)

	sendUpdateThroughUI(t, browser, page, payload, filepath.Join(artifacts, "webui-decide-dialog.png"))

	// The real server: the vote counted, unverified, and the run went on to its end.
	var d runs.Description
	require.Eventually(t, func() bool { d = show(run.ID); return d.Status.Terminal() }, 2*time.Minute, 250*time.Millisecond,
		"rollout %s ends after the sign-off", run.ID)
	checkPage(t, browser, page+"/user-metadata", filepath.Join(artifacts, "webui-decide-done.png"), `rollout — completed`)
	require.Equal(t, runs.StatusCompleted, d.Status, d.Error)
	require.NotNil(t, d.State)
	require.Len(t, d.State.Gates, 1)
	g := d.State.Gates[0]
	assert.Equal(t, "sign-off", g.Name)
	require.Len(t, g.Votes, 1)
	assert.Equal(t, "alice", g.Votes[0].By)
	assert.Equal(t, approval.Approve, g.Votes[0].Kind)
	assert.Nil(t, g.Votes[0].Verified, "a vote from the Web UI is unverified")
	require.NotNil(t, g.Decision)
	assert.Equal(t, approval.Approved, g.Decision.Outcome)
	var result struct {
		SignOff approval.Outcome `json:"sign_off"`
	}
	require.NoError(t, json.Unmarshal(d.Result, &result), string(d.Result))
	assert.Equal(t, approval.Approved, result.SignOff, "the flow saw the sign-off approved")
}

// sendUpdateThroughUI sends the Update gateflow.approval with payload to the run at page the
// way a person does in the Web UI: More Actions → Send an Update → gateflow.approval (listed
// with its description) → paste the JSON → Submit, and checks the dialog closes (the Update
// was accepted). A screenshot of the dialog goes to shot.
func sendUpdateThroughUI(t *testing.T, browser *browser, page, payload, shot string) {
	t.Helper()
	// More Actions → Send an Update → gateflow.approval → paste → Submit. The page holds
	// hidden copies of its menus (one per layout): a person clicks the visible one.
	option := visible(`dialog[open] li[role="option"]`, "gateflow.approval")
	menuItem := visible(`[data-testid="update-button"]`, "")
	nameSelect := visible(`dialog[open] [data-testid="update-select-button"]`, "")
	// A click that lands while a menu closes goes elsewhere (another tab): on a loaded
	// machine the sequence starts again (a menu closed, a freshly loaded page every third
	// time), for up to three minutes.
	var openErr error
	for try, deadline := 0, time.Now().Add(3*time.Minute); ; try++ {
		if try%3 == 0 {
			require.NoError(t, browser.open(page))
		} else {
			_ = browser.do(chromedp.KeyEvent(kb.Escape)) // close what the last try left open
		}
		openErr = nil
		for _, step := range []struct{ click, shown chromedp.JSPath }{
			{visible("button", "More Actions"), menuItem}, {menuItem, nameSelect}, {nameSelect, option},
		} {
			if err := browser.clickUntil(step.click, step.shown, 10*time.Second); err != nil {
				openErr = fmt.Errorf("try %d: click %s, then %s: %w", try+1, step.click, step.shown, err)
				break
			}
		}
		if openErr == nil || time.Now().After(deadline) {
			break
		}
	}
	if openErr != nil {
		_ = browser.screenshot(shot)
		t.Fatalf("open the Send an Update dialog: %v", openErr)
	}
	listed, err := eval[string](browser, string(option)+`.innerText`)
	require.NoError(t, err)
	assert.Contains(t, listed, "Vote on an approval gate", "the dialog lists the Update with its description")
	require.NoError(t, browser.do(chromedp.Click(option, chromedp.NodeVisible)), "pick gateflow.approval")
	// The list fades out over the form: a click on Submit before it is gone picks another Update.
	_, err = eval[bool](browser, `new Promise(done => { const check = () => { const l = document.querySelector('dialog[open] [role="listbox"]');
  if (!l || getComputedStyle(l).visibility === 'hidden') { done(true); } else { setTimeout(check, 50); } }; check(); })`)
	require.NoError(t, err, "the list of Updates closes")
	picked, err := eval[string](browser, `document.querySelector('dialog[open] [data-testid="update-select"]').value`)
	require.NoError(t, err)
	require.Equal(t, "gateflow.approval", picked)
	pasted, err := eval[string](browser, pasteScript(`dialog[open] [role="textbox"][aria-label="Data"]`, payload))
	require.NoError(t, err)
	require.JSONEq(t, payload, pasted, "the editor holds the pasted JSON")
	// Leaving the editor reformats the JSON and so moves Submit: leave it, then let the
	// dialog settle, as a person does before moving the mouse there.
	reformatted, err := eval[string](browser, `new Promise(done => { document.activeElement.blur();
  const box = document.querySelector('dialog[open] [role="textbox"][aria-label="Data"]');
  setTimeout(() => done(box.innerText), 500); })`)
	require.NoError(t, err)
	require.JSONEq(t, payload, reformatted, "the editor still holds the pasted JSON")
	require.NoError(t, browser.screenshot(shot))
	require.NoError(t, browser.do(chromedp.Click(visible(`dialog[open] [data-testid="confirm-modal-button"]`, ""), chromedp.NodeVisible)),
		"submit the Update")
	assert.NoError(t, browser.do(chromedp.WaitNotPresent(visible(`dialog[open] [role="textbox"][aria-label="Data"]`, ""))),
		"the dialog closes once the Update is accepted")
}

// visible selects the first element matching css that is displayed and whose text
// starts with text (any text when empty).
func visible(css, text string) chromedp.JSPath {
	c, _ := json.Marshal(css)
	t, _ := json.Marshal(text)
	return chromedp.JSPath(fmt.Sprintf(`[...document.querySelectorAll(%s)].find(e => e.offsetParent !== null && e.innerText.trim().startsWith(%s))`, c, t))
}

// pasteScript pastes text into the editor at selector as a person's paste does (a paste
// event with the text on the clipboard, so the editor adds no brackets) and returns what
// the editor then holds.
func pasteScript(selector, text string) string {
	sel, _ := json.Marshal(selector)
	txt, _ := json.Marshal(text)
	return fmt.Sprintf(`(() => {
  const box = document.querySelector(%s);
  if (!box) { throw new Error('no editor ' + %s); }
  box.focus();
  const data = new DataTransfer();
  data.setData('text/plain', %s);
  box.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
  return box.innerText;
})()`, sel, sel, txt)
}
