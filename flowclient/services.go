package flowclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Services lists the services the workers of the client's task queue declared, as each
// worker last reported them (its limits and breaker state), sorted by service and worker.
// core.ErrNoCatalog means no worker with services ever started on the queue. A worker that
// stopped keeps its last report (see UpdatedAt).
func (c *Client) Services(ctx context.Context) ([]core.ServiceStatus, error) {
	id := protocol.ServicesID(c.opts.TaskQueue)
	resp, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("services of task queue %s: %w", c.opts.TaskQueue, core.ErrNoCatalog)
		}
		return nil, fmt.Errorf("read the services of %s: %w", c.opts.TaskQueue, err)
	}
	var cat entity.CatalogState
	ok, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoCatalog, &cat)
	if err != nil {
		return nil, fmt.Errorf("read the services of %s: %w", c.opts.TaskQueue, err)
	}
	if !ok {
		return nil, fmt.Errorf("services of task queue %s: %w", c.opts.TaskQueue, core.ErrNoCatalog)
	}
	out := make([]core.ServiceStatus, 0, len(cat.Workflows))
	for _, raw := range cat.Workflows {
		var e protocol.ServiceEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("read the services of %s: entry %s: %w", c.opts.TaskQueue, string(raw), err)
		}
		out = append(out, e.ServiceStatus)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Service != out[j].Service {
			return out[i].Service < out[j].Service
		}
		return out[i].Worker < out[j].Worker
	})
	return out, nil
}
