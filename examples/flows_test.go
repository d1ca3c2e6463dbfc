package examples_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/flowdef/serve"
	"github.com/gateflow/gateflow/mcptools"
	"github.com/gateflow/gateflow/testsuite"
)

// devWorker is a worker with the dev worker's Go flows and MCP server (flow-worker --dev
// with bin/triage-tools, as make run has it).
func devWorker() *flow.Worker {
	return flow.NewWorker(nil, flow.WorkerOptions{Directory: examples.Directory(),
		MCPServers: []mcptools.Server{{Name: examples.TriageServer, Command: []string{"triage-tools"}}}}, examples.All()...)
}

// Every file of examples/flows validates against the dev worker's registry and the
// format's JSON Schema, and loads as flow-worker --dev loads it.
func TestExampleDefinitionsValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("flows", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	w := devWorker()
	reg := flowdef.NewStaticRegistry(w.Registry())
	reg.Dir = "flows"
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		def, err := flowdef.Check(f, data, reg)
		require.NoError(t, err, f)
		require.NoError(t, flowdef.CheckFormat(def), f)
	}
	l, err := serve.Dir(w, "flows", serve.Options{Interp: []interp.Option{interp.DefaultModel("scripted")}})
	require.NoError(t, err)
	assert.Equal(t, []string{"code-review", "incident", "triage-agent-yaml"}, l.Names())
	require.NoError(t, w.Validate())
}

// examplesFlow is the served flow of name, for the test environment.
func examplesFlow(t *testing.T, name string) flow.Definition {
	t.Helper()
	l, err := serve.Dir(devWorker(), "flows", serve.Options{Interp: []interp.Option{interp.DefaultModel("scripted")}})
	require.NoError(t, err)
	for _, f := range l.Flows() {
		if f.Name() == name {
			return f
		}
	}
	t.Fatalf("no served flow %s", name)
	return nil
}

func outputOf(t *testing.T, r *testsuite.Result) map[string]any {
	t.Helper()
	require.NoError(t, r.Err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(r.Output, &out))
	return out
}

// The examples run with the scripted provider's answers, as under make run.
func TestExampleIncidentRuns(t *testing.T) {
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory()})
	env.ScriptAgent(examples.ScriptedRules()...)
	env.Register(examplesFlow(t, "incident"))
	r := env.Run("incident", map[string]any{"alert": map[string]any{"name": "disk-full"}, "service": "db"})
	out := outputOf(t, r)
	assert.Equal(t, "medium", out["severity"])
	assert.Equal(t, "filed a ticket for db: disk 91% full on the primary database", out["ticket"])
}

func TestExampleCodeReviewRuns(t *testing.T) {
	env := testsuite.NewEnv(t, flow.WorkerOptions{Directory: examples.Directory()})
	env.ScriptAgent(examples.ScriptedRules()...)
	env.Register(examplesFlow(t, "code-review"))
	env.Approve(time.Minute, "human_ok", "alice")
	r := env.Run("code-review", map[string]any{"repo": "gateflow", "pr": 42, "files": []string{"flow/worker.go", "README.md"}})
	out := outputOf(t, r)
	assert.Equal(t, "good", out["verdict"])
	assert.EqualValues(t, 2, out["reviewed"])
	assert.Contains(t, r.StepNames(), "post")
}
