package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/flowctl"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/testsuite"
)

// A finished run's history, exported with flowctl, replays against the code.
func TestFlowctlOpsHistoryExportReplays(t *testing.T) {
	r := flowctlRun(t, "", "start", "hello", "--input", `{"name":"History"}`, "--id", "ops-history", "--wait")
	require.Equal(t, 0, r.code, r.stderr)

	file := filepath.Join(t.TempDir(), "hello.json")
	r = flowctlRun(t, "", "history", "ops-history", "-f", file)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^Wrote the history of run ops-history \(\d+ events\) to `+regexp.QuoteMeta(file)+`\.\n$`, r.stdout)
	require.NoError(t, testsuite.Replay(file, flow.WorkerOptions{}, examples.All()...))

	// The same JSON testsuite.RecordHistory writes, with the workflow ID replay needs.
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	want := filepath.Join(t.TempDir(), "recorded.json")
	require.NoError(t, testsuite.RecordHistory(ctxT(t, time.Minute), shared.tc, "ops-history", want))
	wantB, err := os.ReadFile(want)
	require.NoError(t, err)
	assert.Equal(t, string(wantB), string(b))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	assert.Equal(t, "ops-history", doc[testsuite.WorkflowIDField])

	// Without -f it goes to standard output.
	r = flowctlRun(t, "", "history", "ops-history")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, string(b)+"\n", r.stdout)

	r = flowctlRun(t, "", "history", "ops-history", "-f", file, "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var out struct {
		Run    string `json:"run"`
		File   string `json:"file"`
		Events int    `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, "ops-history", out.Run)
	assert.Equal(t, file, out.File)
	assert.Greater(t, out.Events, 5)

	missing := filepath.Join(t.TempDir(), "missing.json")
	r = flowctlRun(t, "", "history", "ops-no-such-run", "-f", missing)
	assert.Equal(t, flowctl.ExitNotFound, r.code)
	assert.Equal(t, "flowctl: run ops-no-such-run not found\n", r.stderr)
	assert.NoFileExists(t, missing)
}

func TestFlowctlOpsSetup(t *testing.T) {
	// The embedded server registered every attribute when it created the namespace.
	r := flowctlRun(t, "", "setup")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "All 9 gateflow search attributes are present on namespace default; nothing added.\n", r.stdout)

	r = flowctlRun(t, "", "setup", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var res struct {
		Added   []string `json:"added"`
		Present []string `json:"present"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.Equal(t, []string{}, res.Added)
	assert.Len(t, res.Present, len(searchattr.All()))
	assert.Contains(t, res.Present, searchattr.Status)

	// A namespace without them gets them all, once.
	for _, ns := range []string{"ops-setup", "ops-setup-table"} {
		_, err := shared.tc.WorkflowService().RegisterNamespace(ctxT(t, 10*time.Second), &workflowservice.RegisterNamespaceRequest{
			Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
		})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		r = flowctlRun(t, "", "--namespace", "ops-setup", "setup", "-o", "json")
		return r.code == 0
	}, 30*time.Second, 200*time.Millisecond, "setup on a new namespace: %s", r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	assert.Len(t, res.Added, len(searchattr.All()), r.stdout)
	assert.Equal(t, []string{}, res.Present)
	r = flowctlRun(t, "", "--namespace", "ops-setup", "setup")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "All 9 gateflow search attributes are present on namespace ops-setup; nothing added.\n", r.stdout)

	require.Eventually(t, func() bool {
		r = flowctlRun(t, "", "--namespace", "ops-setup-table", "setup")
		return r.code == 0
	}, 30*time.Second, 200*time.Millisecond, "setup on a new namespace: %s", r.stderr)
	assert.Equal(t, "Added 9 search attribute(s) to namespace ops-setup-table:\n"+
		"  FlowCategory (Keyword)\n  FlowCostUSD (Double)\n  FlowCreatedBy (Keyword)\n  FlowLabels (KeywordList)\n"+
		"  FlowMaxCostUSD (Double)\n  FlowPriority (Int)\n  FlowStatus (Keyword)\n  FlowVersion (Keyword)\n"+
		"  FlowWaiting (KeywordList)\n", r.stdout)

	r = flowctlRun(t, "", "--namespace", "ops-no-such-namespace", "setup")
	assert.Equal(t, flowctl.ExitNotFound, r.code, "an unknown namespace is not found (issue 31)")
	assert.Equal(t, "flowctl: namespace \"ops-no-such-namespace\" not found on the Temporal server at "+shared.srv.FrontendAddress()+
		" (it comes from --namespace, TEMPORAL_NAMESPACE or the profile; `temporal operator namespace list` lists the server's)\n", r.stderr)
}

// watch follows a ship run until it asks for release notes, and says how to answer.
func TestFlowctlOpsWatchUntilInput(t *testing.T) {
	r := flowctlRun(t, "", "start", "ship", "--input", `{"version":"7.7.7"}`, "--id", "ops-watch-ship")
	require.Equal(t, 0, r.code, r.stderr)
	t.Cleanup(func() { opsTerminate(t, "ops-watch-ship") })

	r = flowctlRun(t, "", "watch", "ops-watch-ship", "--interval", "100ms")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Watching ship run ops-watch-ship")
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d  started   release-notes\s+input$`, r.stdout)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d  waiting   input:release-notes \(awaiting_input\)$`, r.stdout)
	assert.Contains(t, r.stdout, "  input release-notes: Release notes for 7.7.7 (from group:release)\n"+
		"    "+sharedHint("flowctl input ops-watch-ship release-notes --data '{...}'")+"\n")

	r = flowctlRun(t, "", "watch", "ops-watch-ship", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	events := opsWatchEvents(t, r.stdout)
	last := events[len(events)-1]
	assert.Equal(t, "waiting", last["event"])
	assert.Equal(t, []any{"input:release-notes"}, last["waiting"])
	reqs, _ := last["requests"].([]any)
	require.Len(t, reqs, 1)
	assert.Equal(t, sharedHint("flowctl input ops-watch-ship release-notes --data '{...}'"), reqs[0].(map[string]any)["command"])
}

// watch follows a hello run to its end: every step starts and finishes once.
func TestFlowctlOpsWatchToTheEnd(t *testing.T) {
	r := flowctlRun(t, "", "start", "hello", "--input", `{"name":"Watch"}`, "--id", "ops-watch-hello")
	require.Equal(t, 0, r.code, r.stderr)
	r = flowctlRun(t, "", "watch", "ops-watch-hello", "--interval", "50ms")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d  finished  greet\s+shell\s+completed\s+\S+\s+-\s+Hello, Watch!$`, r.stdout)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d  finished  shout\s+shell\s+completed\s+\S+\s+-\s+HELLO, WATCH!$`, r.stdout)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d  ended     completed after \S+, 2 step\(s\), cost \$0\.0000$`, r.stdout)
	assert.Contains(t, r.stdout, `  result {"greeting":"Hello, Watch!","shouted":"HELLO, WATCH!"}`)

	r = flowctlRun(t, "", "start", "hello", "--input", `{"name":"Json"}`, "--id", "ops-watch-hello-json")
	require.Equal(t, 0, r.code, r.stderr)
	r = flowctlRun(t, "", "watch", "ops-watch-hello-json", "--interval", "50ms", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var seq []string
	for _, e := range opsWatchEvents(t, r.stdout) {
		switch e["event"] {
		case "step_started", "step_finished":
			seq = append(seq, e["event"].(string)+" "+e["step"].(map[string]any)["name"].(string))
		case "ended":
			seq = append(seq, "ended "+e["status"].(string))
		}
	}
	assert.Equal(t, []string{"step_started greet", "step_finished greet", "step_started shout", "step_finished shout",
		"ended completed"}, seq)

	// A run that fails exits 5, as start --wait does.
	r = flowctlRun(t, "", "start", "test.failing", "--id", "ops-watch-failing")
	require.Equal(t, 0, r.code, r.stderr)
	r = flowctlRun(t, "", "watch", "ops-watch-failing", "--interval", "50ms")
	assert.Equal(t, flowctl.ExitRunFailed, r.code)
	assert.Regexp(t, `(?m)^\d\d:\d\d:\d\d  finished  explode\s+shell\s+failed\s+\S+\s+-\s+exit code 3: disk full`, r.stdout)
	assert.Equal(t, "flowctl: run ops-watch-failing ended failed\n", r.stderr)

	r = flowctlRun(t, "", "watch", "ops-no-such-run")
	assert.Equal(t, flowctl.ExitNotFound, r.code)
	assert.Equal(t, "flowctl: run ops-no-such-run not found\n", r.stderr)
}

func TestFlowctlOpsCompletion(t *testing.T) {
	r := flowctlRun(t, "", "completion", "bash")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "flowctl")
	assert.Contains(t, r.stdout, "__start_flowctl")

	// Run IDs complete from the server.
	r = flowctlRun(t, "", "start", "hello", "--id", "ops-complete-me", "--wait")
	require.Equal(t, 0, r.code, r.stderr)
	require.Eventually(t, func() bool {
		r = flowctlRun(t, "", "__complete", "watch", "ops-complete")
		return r.code == 0 && strings.Contains(r.stdout, "ops-complete-me\thello, completed\n")
	}, 10*time.Second, 100*time.Millisecond, "completes the run ID: %q %q", r.stdout, r.stderr)
}

func opsWatchEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &e), "one JSON object per line: %q", line)
		events = append(events, e)
	}
	require.NotEmpty(t, events)
	return events
}

func opsTerminate(t *testing.T, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = shared.tc.TerminateWorkflow(ctx, id, "", "test over")
}
