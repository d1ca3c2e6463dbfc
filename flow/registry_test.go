package flow

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gateflow/gateflow/activities"

	"github.com/gateflow/gateflow/items"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

func countFiles(context.Context, string) (int, error) { return 0, nil }

func registryWorker() *Worker {
	w := NewWorker(nil, WorkerOptions{TaskQueue: "reg",
		ItemProviders: []items.Provider{ticketProvider{}},
		GateResolvers: []gates.Resolver{&scriptedResolver{typ: "ci-status"}, &scriptedResolver{typ: "jira"}},
	}, Define("notify-team", func(*Context, string) (string, error) { return "", nil }))
	w.RegisterActivity(countFiles, "")
	w.RegisterActivity(countFiles, "post-comment")
	w.RegisterActivity(countFiles, "shell") // a builtin's name is not listed twice
	return w
}

func TestWorkerRegistryListsWhatWasRegistered(t *testing.T) {
	info := registryWorker().Registry()
	assert.Equal(t, []string{"countFiles", "post-comment"}, info.Actions, "the built-in actions are not listed")
	r := flowdef.NewStaticRegistry(info)
	assert.Equal(t, []string{"shell", "http", "agent", "countFiles", "post-comment"}, r.Actions)
	assert.False(t, r.HasFallbackAction(), "no fallback action registered")
	assert.Equal(t, []string{"tickets"}, r.ItemProviders)
	assert.Equal(t, []string{"http", "command", "ci-status", "jira"}, r.GateTypes)
	assert.Equal(t, []string{"notify-team"}, r.GoFlows)

	src := `name: uses-all
steps:
  - {id: a, uses: post-comment}
  - {id: b, uses: countFiles}
  - id: c
    foreach: {provider: tickets, steps: [{uses: shell, with: {command: "true"}}]}
  - {id: d, gate: {type: poll, resolver: jira}}
  - {id: e, call: notify-team}
`
	_, err := flowdef.Check("uses-all.yaml", []byte(src), r)
	require.NoError(t, err)
	_, err = flowdef.Check("bad.yaml", []byte("name: bad\nsteps:\n  - {id: a, uses: nope}\n"), r)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.yaml:3:19: step 'a': no registered action 'nope'")
}

func TestWorkerFlowsAreOfKindGo(t *testing.T) {
	for _, f := range registryWorker().Flows() {
		assert.Equal(t, protocol.KindGoFlow, f.Kind, f.Name)
	}
}

// memoServer answers DescribeWorkflowExecution of a catalog with the Memo the catalog
// entity keeps.
type memoServer struct {
	client.Client
	queue string
	state entity.CatalogState
}

func (s *memoServer) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	if id != protocol.CatalogID(s.queue) {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	p, err := converter.GetDefaultDataConverter().ToPayload(s.state)
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Memo: &commonpb.Memo{Fields: map[string]*commonpb.Payload{protocol.MemoCatalog: p}},
	}}, nil
}

// TestCatalogRoundTripOfTheRegistry publishes a worker's entries as Worker.publish does,
// merges them as the catalog entity does and reads them back as a client.
func TestWorkerWithAFallbackActionAcceptsEveryActionName(t *testing.T) {
	w := registryWorker()
	w.RegisterFallbackAction(func(context.Context, activities.ActionCall) (any, error) { return nil, nil })
	r := flowdef.NewStaticRegistry(w.Registry())
	assert.True(t, r.HasFallbackAction())
	assert.NotContains(t, r.Actions, protocol.FallbackActionActivity, "the fallback is not an action name")
	_, err := flowdef.Check("any.yaml", []byte("name: any\nsteps:\n  - {id: a, uses: anything-at-all}\n"), r)
	require.NoError(t, err, "with a fallback, any action name is served")

	reg, err := w.registryEntry("w1", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	require.NoError(t, err)
	var e startplan.RegistryEntry
	require.NoError(t, json.Unmarshal(reg, &e))
	assert.True(t, e.Registry.Fallback, "clients learn it from the catalog")
}

func TestCatalogRoundTripOfTheRegistry(t *testing.T) {
	w := registryWorker()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var raw []json.RawMessage
	for _, e := range w.Flows() {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		raw = append(raw, b)
	}
	yaml, err := json.Marshal(core.WorkflowInfo{Name: "code-review", Kind: protocol.KindYAMLFlow, Version: "3", Hash: "sha256:ab", Source: "flows/review.yaml"})
	require.NoError(t, err)
	reg, err := w.registryEntry("w1", now)
	require.NoError(t, err)
	st := entity.CatalogState{TaskQueue: "reg"}
	st.Merge(append(raw, yaml, reg), now)

	srv := &memoServer{queue: "reg", state: st}
	cat, err := startplan.ReadCatalog(context.Background(), srv, "reg")
	require.NoError(t, err)
	assert.Equal(t, []string{"code-review", "notify-team"}, cat.Names(), "the registry entry is not a flow")
	require.NotNil(t, cat.Workers)
	assert.Equal(t, core.RegistryInfo{Actions: []string{"countFiles", "post-comment"}, ItemProviders: []string{"tickets"},
		GateTypes: []string{"ci-status", "jira"}, Services: []string{}, MCPServers: []string{}, PublishedBy: "w1", PublishedAt: now}, *cat.Workers)
	assert.False(t, flowdef.NewStaticRegistry(cat.Registry()).HasService("github"), "the worker declared no services: none is known")
	servers, known := flowdef.NewStaticRegistry(cat.Registry()).MCPServerList()
	assert.True(t, known && len(servers) == 0, "the worker declared no MCP servers: known to be none")
	got, _ := cat.Lookup("code-review")
	assert.Equal(t, core.WorkflowInfo{Name: "code-review", Kind: protocol.KindYAMLFlow, Version: "3", Hash: "sha256:ab", Source: "flows/review.yaml"}, got)

	again, err := startplan.ReadCatalog(context.Background(), srv, "reg")
	require.NoError(t, err)
	r := flowdef.NewStaticRegistry(again.Registry())
	want := flowdef.NewStaticRegistry(w.Registry())
	assert.Equal(t, want.Actions, r.Actions)
	assert.Equal(t, want.ItemProviders, r.ItemProviders)
	assert.Equal(t, want.GateTypes, r.GateTypes)
	assert.Equal(t, []string{"code-review", "notify-team"}, r.GoFlows, "served definitions may be called")
	assert.NotEmpty(t, want.InputSchemas["notify-team"])
	assert.Equal(t, want.InputSchemas, r.InputSchemas, "the flows' input schemas, for agent flow tools")
}

func TestTheRegistryEntryNameIsReserved(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{}, Define(protocol.RegistryEntryName, func(*Context, string) (string, error) { return "", nil }))
	assert.ErrorContains(t, w.Validate(), "reserved")
}
