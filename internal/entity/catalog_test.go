package entity

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/protocol"
)

// The catalog workflow (ported from flow/lifecycle_test.go).

func TestCatalogWorkflowContinuesAsNewWhenSuggested(t *testing.T) {
	env := newTestEnv(t, protocol.CatalogWorkflowType, catalogWorkflow)
	env.SetContinueAsNewSuggested(true)
	env.OnUpsertMemo(mock.Anything).Return(nil).Maybe()
	initial := CatalogState{TaskQueue: "q", Workflows: raw(t, entry{Name: "kept", Version: "1"})}
	env.ExecuteWorkflow(protocol.CatalogWorkflowType, initial)
	require.True(t, env.IsWorkflowCompleted())
	cat := continuedAs[CatalogState](t, env.GetWorkflowError(), protocol.CatalogWorkflowType)
	assert.Equal(t, "q", cat.TaskQueue)
	assert.Equal(t, []string{"kept"}, names(t, cat), "the catalog is carried into the next run")
	kept, _ := lookup(t, cat, "kept")
	assert.Equal(t, "1", kept.Version)
	env.AssertNotCalled(t, "UpsertMemo", mock.Anything)
}

func TestCatalogWorkflowMergesPublishes(t *testing.T) {
	env := newTestEnv(t, protocol.CatalogWorkflowType, catalogWorkflow)
	var memos []CatalogState
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		// The SDK serialises the memo at once; copy the entries the same way, as later
		// merges reuse the slice's backing array.
		cat := args.Get(0).(map[string]any)[protocol.MemoCatalog].(CatalogState)
		cat.Workflows = append([]json.RawMessage(nil), cat.Workflows...)
		memos = append(memos, cat)
	}).Return(nil)
	// catalogMaxSignals publishes, then the workflow continues as new. Every tenth
	// publish replaces "shared"; the others add their own entry.
	for i := 0; i < catalogMaxSignals; i++ {
		entries := []entry{{Name: fmt.Sprintf("wf-%03d", i)}}
		if i%10 == 0 {
			entries = []entry{{Name: "shared", Version: fmt.Sprint(i)}}
		}
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(protocol.CatalogPublishSignal, entries) }, time.Duration(i+1)*time.Second)
	}
	env.ExecuteWorkflow(protocol.CatalogWorkflowType, CatalogState{TaskQueue: "q", Workflows: raw(t, entry{Name: "zzz-old"})})
	require.True(t, env.IsWorkflowCompleted())

	require.Len(t, memos, catalogMaxSignals, "the memo is updated after each publish")
	assert.Equal(t, []string{"shared", "zzz-old"}, names(t, memos[0]))
	last := memos[len(memos)-1]
	assert.Len(t, last.Workflows, catalogMaxSignals-catalogMaxSignals/10+2)
	shared, ok := lookup(t, last, "shared")
	require.True(t, ok)
	assert.Equal(t, "190", shared.Version)
	assert.Equal(t, env.Now().UTC(), last.UpdatedAt.UTC())
	assert.Equal(t, "q", last.TaskQueue)

	cat := continuedAs[CatalogState](t, env.GetWorkflowError(), protocol.CatalogWorkflowType)
	assert.Equal(t, names(t, last), names(t, cat), "the next run starts from the same catalog")
}

func TestCatalogWorkflowContinuesAsNewAfterThePublishInHand(t *testing.T) {
	env := newTestEnv(t, protocol.CatalogWorkflowType, catalogWorkflow)
	var memos []CatalogState
	env.OnUpsertMemo(mock.Anything).Run(func(args mock.Arguments) {
		cat := args.Get(0).(map[string]any)[protocol.MemoCatalog].(CatalogState)
		cat.Workflows = append([]json.RawMessage(nil), cat.Workflows...)
		memos = append(memos, cat)
	}).Return(nil)
	signalAt(env, time.Minute, protocol.CatalogPublishSignal, []entry{{Name: "b", OverallQuotaUSD: "50"}})
	env.RegisterDelayedCallback(func() {
		// The catalog is waiting for a publish when the suggestion comes: it merges the
		// publish first.
		env.SetContinueAsNewSuggested(true)
		env.SignalWorkflow(protocol.CatalogPublishSignal, []entry{{Name: "a"}})
	}, 2*time.Minute)
	env.ExecuteWorkflow(protocol.CatalogWorkflowType, CatalogState{TaskQueue: "q"})
	require.True(t, env.IsWorkflowCompleted())
	require.Len(t, memos, 2)
	assert.Equal(t, "50", memos[0].MonthlyQuotaUSD)
	assert.Equal(t, []string{"a", "b"}, names(t, memos[1]))
	cat := continuedAs[CatalogState](t, env.GetWorkflowError(), protocol.CatalogWorkflowType)
	assert.Equal(t, []string{"a", "b"}, names(t, cat))
	assert.Empty(t, cat.MonthlyQuotaUSD, "the last publisher set no overall quota")
	assert.Equal(t, env.Now().UTC(), cat.UpdatedAt.UTC())
}
