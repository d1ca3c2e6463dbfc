package flowclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/entity"
	"github.com/gateflow/gateflow/internal/startplan"
)

// MaxRunsError refuses a start because its flow has its flow.MaxRuns live runs and refuses
// what overflows (core.OverflowRefuse). Nothing was started.
type MaxRunsError struct {
	// Workflow is the flow, Max its MaxRuns, Live the live runs' IDs, oldest first.
	Workflow string
	Max      int
	Live     []string
	// Key is the start's concurrency key (flow.MaxRunsPerKey); empty for MaxRuns.
	Key string
}

// Error implements error.
func (e *MaxRunsError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("start %s: the flow allows at most %d live runs per concurrency key (max runs, on overflow refuse) and key %q has %d: %s",
			e.Workflow, e.Max, e.Key, len(e.Live), strings.Join(e.Live, ", "))
	}
	return fmt.Sprintf("start %s: the flow allows at most %d live runs (max runs, on overflow refuse) and has %d: %s",
		e.Workflow, e.Max, len(e.Live), strings.Join(e.Live, ", "))
}

// admitMaxRuns applies the MaxRuns of the flow info at a start whose MaxRuns group is
// group (startGroup): a refusing flow at its limit refuses with a *MaxRunsError; a
// replacing one returns the live runs of the group to cancel once the new run has started
// (the oldest, enough to leave room for it).
func (c *Client) admitMaxRuns(ctx context.Context, info core.WorkflowInfo, group string) ([]string, error) {
	if info.MaxRuns < 1 || info.OnOverflow == core.OverflowQueue || info.OnOverflow == "" || group == "" {
		return nil, nil
	}
	live, err := entity.ConcurrencyRuns(ctx, c.tc, c.opts.TaskQueue, group)
	if err != nil {
		return nil, fmt.Errorf("start %s: count its live runs: %w", info.Name, err)
	}
	if len(live) < info.MaxRuns {
		return nil, nil
	}
	if info.OnOverflow == core.OverflowRefuse {
		e := &MaxRunsError{Workflow: info.Name, Max: info.MaxRuns, Live: live}
		if info.MaxRunsKey != "" {
			e.Key = strings.TrimPrefix(group, startplan.MaxRunsGroup(info.Name)+":")
		}
		return nil, e
	}
	return live[:len(live)-info.MaxRuns+1], nil
}

// replaceRuns cancels the runs a replacing start displaces, with the reason "replaced by
// RUN". A run that ended meanwhile is left alone.
func (c *Client) replaceRuns(ctx context.Context, run *core.Run, victims []string) error {
	var errs []error
	for _, v := range victims {
		err := c.Cancel(ctx, CancelRequest{Run: v, Reason: "replaced by " + run.ID})
		var refused *RefusedError
		var gone *RunNotFoundError
		if err != nil && !errors.As(err, &refused) && !errors.As(err, &gone) {
			errs = append(errs, fmt.Errorf("cancel run %s it replaces: %w", v, err))
		}
	}
	return errors.Join(errs...)
}
