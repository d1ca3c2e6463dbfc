package startplan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
)

// ReadCatalog reads the catalog of the task queue from its entity's Memo.
// core.ErrNoCatalog means no worker has published one there.
func ReadCatalog(ctx context.Context, tc client.Client, taskQueue string) (*core.Catalog, error) {
	resp, err := tc.DescribeWorkflowExecution(ctx, protocol.CatalogID(taskQueue), "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("task queue %s: %w", taskQueue, core.ErrNoCatalog)
		}
		return nil, fmt.Errorf("read catalog of %s: %w", taskQueue, err)
	}
	var m catalogMemo
	ok, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoCatalog, &m)
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", taskQueue, err)
	}
	if !ok {
		return nil, fmt.Errorf("task queue %s: %w", taskQueue, core.ErrNoCatalog)
	}
	cat, err := decodeCatalog(m)
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", taskQueue, err)
	}
	return cat, nil
}

// RegistryEntry is the catalog entry carrying a worker's registries
// (protocol.RegistryEntryName). It has the overall quota of its worker as every flow
// entry does, since the catalog takes the quota from the first entry published.
type RegistryEntry struct {
	Name            string            `json:"name"`
	Kind            string            `json:"kind"`
	OverallQuotaUSD string            `json:"overall_quota_usd,omitempty"`
	Registry        core.RegistryInfo `json:"registry"`
}

// decodeCatalog reads the catalog's Memo (entity.CatalogState): the flow entries go to
// Workflows, the registry entry to Workers.
func decodeCatalog(m catalogMemo) (*core.Catalog, error) {
	cat := &core.Catalog{TaskQueue: m.TaskQueue, MonthlyQuotaUSD: m.MonthlyQuotaUSD, UpdatedAt: m.UpdatedAt,
		Workers: m.Workers, Workflows: []core.WorkflowInfo{}}
	for _, raw := range m.Workflows {
		var head struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("decode a catalog entry: %w", err)
		}
		if head.Name == protocol.RegistryEntryName {
			var e RegistryEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				return nil, fmt.Errorf("decode the registry entry: %w", err)
			}
			cat.Workers = &e.Registry
			continue
		}
		var w core.WorkflowInfo
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("decode the catalog entry of %s: %w", head.Name, err)
		}
		cat.Workflows = append(cat.Workflows, w)
	}
	return cat, nil
}

// catalogMemo is the catalog as its Memo holds it. Workers is read too for catalogs
// written as a catalog (tests).
type catalogMemo struct {
	TaskQueue       string             `json:"task_queue"`
	MonthlyQuotaUSD string             `json:"monthly_quota_usd,omitempty"`
	Workflows       []json.RawMessage  `json:"workflows"`
	Workers         *core.RegistryInfo `json:"workers,omitempty"`
	UpdatedAt       time.Time          `json:"updated_at"`
}
