package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/devauth"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/protocol"
)

// TestDevAuthVerifiedCallers runs the real `flow-worker --dev --auth`: the embedded server
// checks bearer tokens (Temporal's JWT claim mapper) and gateflow's Authorizer decides.
func TestDevAuthVerifiedCallers(t *testing.T) {
	workerBin, ctlBin := binaries(t)
	dir := t.TempDir()
	port, uiPort := freePort(t), freePort(t)
	address := fmt.Sprintf("127.0.0.1:%d", port)
	db := filepath.Join(dir, "auth.db")

	worker := exec.Command(workerBin, "--dev", "--auth", "--port", fmt.Sprint(port), "--ui-port", fmt.Sprint(uiPort), "--db-file", db)
	banner, stderr, exited := startWorkerProcess(t, worker)
	keyPath := db + ".auth-key.json"
	assert.Contains(t, banner.String(), "Callers          verified: a bearer token is required (DEV ONLY tokens, key "+keyPath+" created)")
	assert.Contains(t, banner.String(), "flowctl --address "+address+" login NAME --dev-key "+keyPath)

	// The Web UI has no token of its own: without a login it lists nothing.
	assert.Contains(t, banner.String(), fmt.Sprintf("Web UI login: http://127.0.0.1:%d/gateflow/login (it acts as you)", uiPort))
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/namespaces/default/workflows", uiPort))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the Web UI needs a login: %s", body)

	login := filepath.Join(dir, "login.json")
	ctl := func(args ...string) result {
		cmd := exec.Command(ctlBin, append([]string{"--address", address}, args...)...)
		cmd.Env = append(os.Environ(), "GATEFLOW_DEV_LOGIN="+login, "FLOW_USER=")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return result{stdout: o.String(), stderr: e.String(), code: code}
	}

	// No token: refused, with the rule.
	r := ctl("list")
	assert.Equal(t, flowctl.ExitRefused, r.code, r.stderr)
	assert.Contains(t, r.stderr, "a token is required")

	r = ctl("login", "alice", "--dev-key", keyPath)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "DEV ONLY login: flowctl now acts as alice on "+address)

	r = ctl("start", "ship", "--input", `{"version":"7.7.7"}`, "--id", "auth-ship")
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool {
		r = ctl("input", "auth-ship", "release-notes", "--data", `{"summary":"A real summary","risk":"low"}`)
		return r.code == 0
	}, 30*time.Second, 200*time.Millisecond, "alice answers: %s", r.stderr)
	require.Eventually(t, func() bool {
		r = ctl("approve", "auth-ship", "ship")
		return r.code == 0
	}, 30*time.Second, 200*time.Millisecond, "alice votes as herself: %s", r.stderr)
	assert.Equal(t, "Counted: gate ship has 1 of 2 approvals (as alice, dev login).\n", r.stdout)

	// flowctl claiming someone else: --as and FLOW_USER are not identities once logged in.
	r = ctl("approve", "auth-ship", "ship", "--as", "bob")
	assert.Equal(t, flowctl.ExitRefused, r.code)
	assert.Contains(t, r.stderr, "--as bob: you are authenticated as alice (dev login)")

	// Raw SDK clients.
	export := ctl("login", "alice", "--dev-key", keyPath, "--export")
	require.Equal(t, 0, export.code, export.stderr)
	m := regexp.MustCompile(`export TEMPORAL_API_KEY=(\S+)`).FindStringSubmatch(export.stdout)
	require.Len(t, m, 2, export.stdout)
	assert.Contains(t, export.stdout, "export TEMPORAL_TLS=false")
	dialAs := func(token string) client.Client {
		o := client.Options{HostPort: address, Logger: logging.NewSDKLogger(io.Discard, "off")}
		if token != "" {
			o.Credentials = client.NewAPIKeyStaticCredentials(token)
			o.ConnectionOptions.TLSDisabled = true
		}
		c, err := client.NewLazyClient(o)
		require.NoError(t, err)
		t.Cleanup(c.Close)
		return c
	}
	ctx := ctxT(t, 2*time.Minute)
	alice := dialAs(m[1])
	denied := func(err error, reason string) {
		t.Helper()
		var pd *serviceerror.PermissionDenied
		require.ErrorAs(t, err, &pd)
		assert.Contains(t, pd.Reason, reason)
	}
	_, err = alice.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "auth-ship", UpdateName: protocol.UpdateApproval,
		Args: []any{approval.Vote{Gate: "ship", Kind: approval.Approve, By: "bob"}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	denied(err, `by "bob" refused`)
	err = alice.SignalWorkflow(ctx, "auth-ship", "", protocol.SignalApproval, approval.Vote{Gate: "ship", Kind: approval.Reject, By: "bob"})
	denied(err, `Signal gateflow.approval by "bob" refused`)
	err = alice.SignalWorkflow(ctx, protocol.LedgerID("gateflow", "all", "2026-12"), "", protocol.LedgerCharge, map[string]string{"amount": "1000000"})
	denied(err, "only workers may signal entity workflow")
	err = alice.SignalWorkflow(ctx, protocol.CatalogID("gateflow"), "", protocol.CatalogPublishSignal, "{}")
	denied(err, "only workers may signal entity workflow")
	err = alice.TerminateWorkflow(ctx, "auth-ship", "", "mine now")
	denied(err, "TerminateWorkflowExecution is for workers only")

	anon := dialAs("")
	_, err = anon.DescribeWorkflowExecution(ctx, "auth-ship", "")
	denied(err, "a token is required")
	forged, err := mustOtherKey(t).Mint(devauth.Token{Subject: "alice"}, time.Now())
	require.NoError(t, err)
	_, err = dialAs(forged).DescribeWorkflowExecution(ctx, "auth-ship", "")
	var pd *serviceerror.PermissionDenied
	assert.ErrorAs(t, err, &pd, "a token signed by another key is refused")

	key, err := devauth.Load(keyPath)
	require.NoError(t, err)
	expired, err := key.Mint(devauth.Token{Subject: "alice", TTL: time.Hour}, time.Now().Add(-2*time.Hour))
	require.NoError(t, err)
	_, err = dialAs(expired).DescribeWorkflowExecution(ctx, "auth-ship", "")
	assert.ErrorAs(t, err, &pd, "an expired token is refused")

	r = ctl("signal", "deploy-done", "--key", "0.0.1", "--data", `{"environment":"prod"}`)
	assert.Equal(t, flowctl.ExitRefused, r.code)
	assert.Contains(t, r.stderr, "SignalWithStartWorkflowExecution is for workers only")
	// A worker principal (flowctl login --worker) may what people may not.
	r = ctl("login", "ci", "--dev-key", keyPath, "--worker")
	require.Equal(t, 0, r.code, r.stderr)
	r = ctl("signal", "deploy-done", "--key", "0.0.1", "--data", `{"environment":"prod"}`)
	assert.Equal(t, 0, r.code, "a keyed signal goes through a mailbox entity: %s", r.stderr)

	// The worker keeps working: bob's genuine vote passes and the run completes.
	r = ctl("login", "bob", "--dev-key", keyPath)
	require.Equal(t, 0, r.code, r.stderr)
	r = ctl("approve", "auth-ship", "ship")
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool {
		r = ctl("signal", "deploy-done", "--run", "auth-ship", "--key", "7.7.7", "--data", `{"environment":"prod"}`)
		return r.code == 0
	}, 30*time.Second, 200*time.Millisecond, "bob signals the run: %s", r.stderr)
	require.Eventually(t, func() bool {
		r = ctl("show", "auth-ship", "-o", "json")
		return r.code == 0 && strings.Contains(r.stdout, `"status": "completed"`)
	}, 30*time.Second, 200*time.Millisecond, "the run completes: %s %s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, `"by": "bob"`)
	r = ctl("show", "auth-ship")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Started   \S+ \S+ by alice \(server principal\)$`, r.stdout, "the creator, as the server saw the start")

	// A run with a child (its report is a worker-only Signal) completes under auth.
	r = ctl("start", "release", "--input", `{"version":"7.7.8"}`, "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)

	// Principal attribution: history events carry the server-verified caller.
	principals := map[enumspb.EventType][]string{}
	it := alice.GetWorkflowHistory(ctx, "auth-ship", "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if p := e.GetPrincipal(); p != nil {
			principals[e.GetEventType()] = append(principals[e.GetEventType()], p.GetName())
		}
	}
	t.Logf("principals by event type: %v", principals)
	assert.Equal(t, []string{"alice"}, principals[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED])
	// An Update's accepted and completed events are written when the worker completes its
	// workflow task, so they carry the worker's principal, not the voter's.
	assert.Contains(t, principals[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED], "gateflow-worker")
	assert.Len(t, principals[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED], 3,
		"alice's answer and vote and bob's vote; the refused Updates left nothing in history")
	assert.Equal(t, []string{"bob"}, principals[enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED],
		"only bob's deploy-done Signal; the forged reject Signal left nothing")

	// Cancelling: Temporal's request names no one, so people send the Update gateflow.cancel
	// (flowctl cancel), which the server checks is theirs and the run records.
	r = ctl("start", "ship", "--input", `{"version":"7.7.9"}`, "--id", "auth-cancel")
	require.Equal(t, 0, r.code, r.stderr)
	denied(alice.CancelWorkflow(ctx, "auth-cancel", ""), "people cancel run auth-cancel with the Update gateflow.cancel")
	require.Eventually(t, func() bool {
		r = ctl("cancel", "auth-cancel", "--reason", "not this one")
		return r.code == 0
	}, 30*time.Second, 200*time.Millisecond, "bob cancels: %s", r.stderr)
	assert.Equal(t, "Cancel requested for run auth-cancel (as bob, dev login).\n", r.stdout)
	var shown result
	if !assert.Eventually(t, func() bool {
		shown = ctl("show", "auth-cancel", "-o", "json")
		return shown.code == 0 && strings.Contains(shown.stdout, `"error": "cancelled by bob: not this one"`)
	}, 60*time.Second, 200*time.Millisecond, "the run ends cancelled by bob") {
		t.Logf("last show: %s %s", shown.stdout, shown.stderr)
	}

	require.NoError(t, worker.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "flow-worker exits 0 on SIGTERM; stderr:\n%s", stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatal("flow-worker did not stop after SIGTERM")
	}
}

func mustOtherKey(t *testing.T) *devauth.Key {
	t.Helper()
	k, _, err := devauth.LoadOrCreate(filepath.Join(t.TempDir(), "other.json"))
	require.NoError(t, err)
	return k
}
