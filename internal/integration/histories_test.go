package integration

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/signals"
	"github.com/gateflow/gateflow/testsuite"
	"github.com/gateflow/gateflow/testsuite/server"
)

// TestExampleHistoriesRecordAndReplay runs every example flow on a server started with
// testsuite/server, records each run's history and replays it against the code. With
// GATEFLOW_UPDATE_HISTORIES=1 it also writes them to examples/testdata/histories, which
// the examples' replay test replays in every `make test`.
func TestExampleHistoriesRecordAndReplay(t *testing.T) {
	mcp := []mcptools.Server{{Name: examples.TriageServer, Command: []string{triageToolsBin(t)}}}
	srv := server.Start(t, server.Options{Worker: flow.WorkerOptions{
		Providers: examples.Providers(), Directory: examples.Directory(), MCPServers: mcp,
	}}, examples.All()...)
	ctx := ctxT(t, 3*time.Minute)
	c := srv.Client
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer health.Close()

	runs := map[string]string{} // file name → run ID
	start := func(name string, input any, id string) {
		_, err := c.Start(ctx, name, input, core.StartOptions{ID: id})
		require.NoError(t, err)
	}
	start("hello", examples.HelloInput{Name: "history"}, "history-hello")
	runs["hello"] = "history-hello"
	start("release", examples.ReleaseInput{Version: "1.0.0", HealthURL: health.URL}, "history-release")
	runs["release"] = "history-release"
	runs["smoke"] = "history-release/smoke"
	start("release", examples.ReleaseInput{Version: "1.0.1", FailChecks: true}, "history-release-failed")
	runs["release-failed"] = "history-release-failed"

	start("ship", examples.ShipInput{Version: "3.0.0"}, "history-ship")
	runs["ship"] = "history-ship"
	eventually(t, c, "history-ship", "input", waitingFor("input:release-notes"))
	_, err := c.Answer(ctx, flowclient.AnswerRequest{Run: "history-ship", Name: "release-notes", Data: json.RawMessage(`{"summary":"A recorded release","risk":"low"}`), By: "alice"})
	require.NoError(t, err)
	eventually(t, c, "history-ship", "approval", waitingFor("approval:ship"))
	_, err = c.Vote(ctx, "history-ship", approval.Vote{Gate: "ship", Kind: approval.RequestChanges, By: "bob", Comment: "more detail"})
	require.NoError(t, err)
	eventually(t, c, "history-ship", "input again", waitingFor("input:release-notes"))
	_, err = c.Answer(ctx, flowclient.AnswerRequest{Run: "history-ship", Name: "release-notes", Data: json.RawMessage(`{"summary":"A recorded release, in detail","risk":"low"}`), By: "alice"})
	require.NoError(t, err)
	eventually(t, c, "history-ship", "approval again", waitingFor("approval:ship"))
	for _, by := range []string{"alice", "carol"} {
		_, err = c.Vote(ctx, "history-ship", approval.Vote{Gate: "ship", Kind: approval.Approve, By: by})
		require.NoError(t, err)
	}
	eventually(t, c, "history-ship", "deploy", waitingFor("signal:deploy-done/3.0.0"))
	_, err = c.Signal(ctx, "", signals.Envelope{Name: "deploy-done", Key: "3.0.0", ID: "history-deploy", Payload: json.RawMessage(`{"environment":"prod"}`)})
	require.NoError(t, err)

	start("rollout", examples.RolloutInput{Version: "4.0.0"}, "history-rollout")
	runs["rollout"] = "history-rollout"
	eventually(t, c, "history-rollout", "sign-off", waitingFor("approval:sign-off"))
	_, err = c.Vote(ctx, "history-rollout", approval.Vote{Gate: "sign-off", Kind: approval.Approve, By: "carol"})
	require.NoError(t, err)

	// The triage agent (its MCP server a real process): a restart approved by carol.
	start("triage-agent", examples.TriageInput{Service: "search", HealthURL: health.URL}, "history-triage-agent")
	runs["triage-agent"] = "history-triage-agent"
	eventually(t, c, "history-triage-agent", "restart approval", waitingFor("approval:triage/restart_service"))
	_, err = c.Vote(ctx, "history-triage-agent", approval.Vote{Gate: "triage/restart_service", Kind: approval.Approve, By: "carol"})
	require.NoError(t, err)

	dir := t.TempDir()
	update := os.Getenv("GATEFLOW_UPDATE_HISTORIES") == "1"
	// Sorted, so release is waited for before its child smoke exists to be waited for
	// (waiting for smoke first failed now and then with "not found").
	for _, file := range slices.Sorted(maps.Keys(runs)) {
		id := runs[file]
		_, err := c.Wait(ctx, id)
		require.NoError(t, err)
		path := filepath.Join(dir, file+".json")
		require.NoError(t, srv.RecordHistory(ctx, id, path))
		require.NoError(t, testsuite.Replay(path, flow.WorkerOptions{MCPServers: mcp}, examples.All()...), "the fresh history of %s replays", file)
		if update {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join("..", "..", "examples", "testdata", "histories", file+".json"), b, 0o644))
		}
	}
}
