package flow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/gates"
)

// gateActivities answer the poll activity (gateflow.gate.poll) with the worker's gate
// resolvers: the built-ins and WorkerOptions.GateResolvers.
type gateActivities struct {
	resolvers map[string]gates.Resolver
	// types are the resolvers' types, sorted: what runs check a request's type against.
	types []string
}

// newGateActivities checks the worker's resolvers; an empty or repeated type (a
// built-in's too) is an error naming it.
func newGateActivities(extra []gates.Resolver) (gateActivities, error) {
	m, err := gates.Registry(extra)
	if err != nil {
		return gateActivities{}, fmt.Errorf("gate resolvers: %w", err)
	}
	types := make([]string, 0, len(m))
	for t := range m {
		types = append(types, t)
	}
	slices.Sort(types)
	return gateActivities{resolvers: m, types: types}, nil
}

// checkFlows reports each gate type a flow declared (UsesGates) that no resolver serves.
func (a gateActivities) checkFlows(flows []Definition) []error {
	var errs []error
	for _, f := range flows {
		if f == nil {
			continue
		}
		for _, t := range f.Info().GateTypes {
			if _, ok := a.resolvers[t]; !ok {
				errs = append(errs, fmt.Errorf("flow %s uses gate type %q, which no gate resolver of this worker serves (registered: %s; add it to WorkerOptions.GateResolvers)",
					f.Name(), t, strings.Join(a.types, ", ")))
			}
		}
	}
	return errs
}

// gatePollBeat is how often a poll heartbeats while its resolver runs.
const gatePollBeat = 5 * time.Second

// poll runs one poll with the resolver of p.Type. A resolver the worker lacks, params it
// refuses and an answer that is not a valid Poll fail the gate (ErrorInvalidStep, not
// retried); any other error of the resolver is a failed poll, retried by Temporal.
func (a gateActivities) poll(ctx context.Context, p gates.Params) (gates.Poll, error) {
	r, ok := a.resolvers[p.Type]
	if !ok {
		return gates.Poll{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("gate %s: no gate resolver of type %q on this worker (registered: %s)", p.Gate, p.Type, strings.Join(a.types, ", ")),
			string(ErrorInvalidStep), nil)
	}
	stop := make(chan struct{})
	defer close(stop)
	if activity.IsActivity(ctx) {
		go func() {
			tick := time.NewTicker(gatePollBeat)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				case <-tick.C:
					activity.RecordHeartbeat(ctx, p.Poll)
				}
			}
		}()
	}
	poll, err := r.Poll(ctx, p)
	if err != nil {
		var pe *gates.ParamsError
		if errors.As(err, &pe) {
			return gates.Poll{}, temporal.NewNonRetryableApplicationError(err.Error(), string(ErrorInvalidStep), err)
		}
		return gates.Poll{}, fmt.Errorf("gate %s: poll %d with %s: %w", p.Gate, p.Poll, p.Type, err)
	}
	if err := poll.Validate(); err != nil {
		return gates.Poll{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("gate %s: the %s resolver answered a bad poll: %v", p.Gate, p.Type, err), string(ErrorInvalidStep), err)
	}
	return poll.Clip(), nil
}
