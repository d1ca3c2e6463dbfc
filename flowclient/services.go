package flowclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gateflow/gateflow/flow"

	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/protocol"
)

// Services lists the services the workers of the client's task queue declared, as each
// worker last reported them (its limits and breaker state), sorted by service and worker.
// flow.ErrNoCatalog means no worker with services ever started on the queue. A worker that
// stopped keeps its last report (see UpdatedAt).
func (c *Client) Services(ctx context.Context) ([]ServiceStatus, error) {
	id := protocol.ServicesID(c.opts.TaskQueue)
	resp, err := c.tc.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("services of task queue %s: %w", c.opts.TaskQueue, flow.ErrNoCatalog)
		}
		return nil, fmt.Errorf("read the services of %s: %w", c.opts.TaskQueue, err)
	}
	var cat entity.CatalogState
	ok, err := protocol.DecodeMemo(resp.GetWorkflowExecutionInfo().GetMemo(), protocol.MemoCatalog, &cat)
	if err != nil {
		return nil, fmt.Errorf("read the services of %s: %w", c.opts.TaskQueue, err)
	}
	if !ok {
		return nil, fmt.Errorf("services of task queue %s: %w", c.opts.TaskQueue, flow.ErrNoCatalog)
	}
	out := make([]ServiceStatus, 0, len(cat.Workflows))
	for _, raw := range cat.Workflows {
		var e serviceEntry
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

// ServiceBreakerState is a breaker's state on one worker.
type ServiceBreakerState struct {
	// Service is the service's name.
	Service string `json:"service"`
	// State is "closed", "half-open" or "open"; empty when the service has no breaker.
	State string `json:"state,omitempty"`
	// OpenUntil is when an open breaker lets probes through.
	OpenUntil *time.Time `json:"open_until,omitempty"`
	// ConsecutiveFailures, Requests and Failures are the breaker's counts in its current
	// interval (or, while half-open, of the probes).
	ConsecutiveFailures uint32 `json:"consecutive_failures"`
	Requests            uint32 `json:"requests"`
	Failures            uint32 `json:"failures"`
	// UpdatedAt is when the worker reported it.
	UpdatedAt time.Time `json:"updated_at"`
}

// ServiceStatus is a declared service as one worker reported it.
type ServiceStatus struct {
	ServiceBreakerState
	// Worker is the reporting worker's identity.
	Worker string `json:"worker"`
	// RatePerSecond and MaxConcurrent are the worker's limits of the service.
	RatePerSecond float64 `json:"rate_per_second,omitempty"`
	MaxConcurrent int     `json:"max_concurrent,omitempty"`
}

// serviceEntry is a ServiceStatus as the services entity keeps it (its key is Name).
type serviceEntry struct {
	Name string `json:"name"`
	ServiceStatus
}
