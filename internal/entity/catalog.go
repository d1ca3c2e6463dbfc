package entity

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/internal/protocol"
)

// CatalogState is a task queue's catalog as the catalog entity keeps it in its Memo
// (protocol.MemoCatalog) and passes it across continue-as-new. Entries are the flows'
// catalog entries (core.WorkflowInfo) as JSON: the entity needs only their names.
type CatalogState struct {
	TaskQueue string `json:"task_queue"`
	// MonthlyQuotaUSD is the workers' overall monthly quota, if any.
	MonthlyQuotaUSD string            `json:"monthly_quota_usd,omitempty"`
	Workflows       []json.RawMessage `json:"workflows"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

// catalogKey is what the catalog reads of an entry.
type catalogKey struct {
	Name            string `json:"name"`
	OverallQuotaUSD string `json:"overall_quota_usd,omitempty"`
}

func entryKey(raw json.RawMessage) catalogKey {
	var k catalogKey
	_ = json.Unmarshal(raw, &k) // an entry without a readable name sorts first, under ""
	return k
}

// Merge adds or replaces the published entries (by name), keeps the rest, sorts them by
// name and takes the overall quota from the latest publisher.
func (c *CatalogState) Merge(published []json.RawMessage, at time.Time) {
	byName := map[string]json.RawMessage{}
	for _, w := range c.Workflows {
		byName[entryKey(w).Name] = w
	}
	for _, w := range published {
		byName[entryKey(w).Name] = w
	}
	if len(published) > 0 {
		c.MonthlyQuotaUSD = entryKey(published[0]).OverallQuotaUSD
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	c.Workflows = c.Workflows[:0]
	for _, n := range names {
		c.Workflows = append(c.Workflows, byName[n])
	}
	c.UpdatedAt = at
}

// catalogMaxSignals bounds the catalog workflow's history: after that many publishes it
// continues as new with the catalog as input.
const catalogMaxSignals = 200

// catalogWorkflow holds a task queue's catalog in its Memo.
func catalogWorkflow(ctx workflow.Context, cat CatalogState) error {
	ch := workflow.GetSignalChannel(ctx, protocol.CatalogPublishSignal)
	for n := 0; ; n++ {
		var entries []json.RawMessage
		if n >= catalogMaxSignals || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if !ch.ReceiveAsync(&entries) {
				return workflow.NewContinueAsNewError(ctx, protocol.CatalogWorkflowType, cat)
			}
		} else {
			ch.Receive(ctx, &entries)
		}
		cat.Merge(entries, workflow.Now(ctx))
		if err := workflow.UpsertMemo(ctx, map[string]any{protocol.MemoCatalog: cat}); err != nil {
			return err
		}
	}
}

// PublishCatalog sends a worker's entries to the catalog of queue, starting the catalog
// (with the entries already in its Memo) when there is none.
func PublishCatalog(ctx context.Context, tc client.Client, queue string, entries []json.RawMessage, now time.Time) error {
	initial := CatalogState{TaskQueue: queue}
	seed := initial
	seed.Merge(append([]json.RawMessage(nil), entries...), now)
	id := protocol.CatalogID(queue)
	_, err := tc.SignalWithStartWorkflow(ctx, id, protocol.CatalogPublishSignal, entries,
		client.StartWorkflowOptions{
			ID:            id,
			TaskQueue:     queue,
			Memo:          map[string]any{protocol.MemoCatalog: seed},
			StaticSummary: "gateflow catalog of task queue " + queue,
		}, protocol.CatalogWorkflowType, initial)
	return err
}
