package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/internal/flowlink"
	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// catalog is what the workers of one task queue serve (flowclient.Catalog).
type catalog struct {
	TaskQueue       string                 `json:"task_queue"`
	MonthlyQuotaUSD string                 `json:"monthly_quota_usd,omitempty"`
	Workflows       []WorkflowInfo         `json:"workflows"`
	Workers         *flowlink.RegistryInfo `json:"workers,omitempty"`
	UpdatedAt       time.Time              `json:"updated_at"`
}

// Lookup returns the entry named name.
func (c *catalog) Lookup(name string) (WorkflowInfo, bool) {
	for _, w := range c.Workflows {
		if w.Name == name {
			return w, true
		}
	}
	return WorkflowInfo{}, false
}

// Names lists the catalog's flow names in order.
func (c *catalog) Names() []string {
	out := make([]string, 0, len(c.Workflows))
	for _, w := range c.Workflows {
		out = append(out, w.Name)
	}
	return out
}

func readCatalog(ctx context.Context, tc client.Client, taskQueue string) (*catalog, error) {
	resp, err := tc.DescribeWorkflowExecution(ctx, protocol.CatalogID(taskQueue), "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("task queue %s: %w", taskQueue, ErrNoCatalog)
		}
		return nil, fmt.Errorf("read catalog of %s: %w", taskQueue, err)
	}
	var m catalogMemo
	ok, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoCatalog, &m)
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", taskQueue, err)
	}
	if !ok {
		return nil, fmt.Errorf("task queue %s: %w", taskQueue, ErrNoCatalog)
	}
	cat, err := decodeCatalog(m)
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", taskQueue, err)
	}
	return cat, nil
}
