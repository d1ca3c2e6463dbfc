package flow

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/startplan"
	"go.temporal.io/sdk/workflow"
)

// MaxRunsPerKey is MaxRuns per key: at most n live runs of the flow for each value of key,
// a template of the run's input: literal text and {field} or {field.sub} references to
// fields of the input's JSON ("{repo}", "{org}/{repo}"). Runs whose keys differ do not
// limit each other; overflow (core.OverflowQueue, core.OverflowRefuse, core.OverflowReplace) applies
// among the runs of one key, so core.OverflowReplace cancels the oldest live run of that key.
// A referenced field must be a string, number or boolean; a missing one, or a key that
// renders empty or longer than 200 bytes, refuses the start with an *InputError.
//
// Where the key is computed: the key is data in the catalog (core.WorkflowInfo.MaxRunsKey),
// not code, so every starter computes it from the JSON input it sends: flowclient.Client.Start (and
// flowctl start, once starts, triggered and signal starts) renders it, checks the
// semaphore of the group "flow:NAME:KEY" for refuse and replace at admission, and hands
// the group to the run in its start options. A run started without one (a schedule, a
// parent's Child step) renders the key itself in workflow code from its input as its
// input type encodes it (json.Marshal of the decoded input, so a struct field the input
// lacked renders as its zero value rather than refusing), recorded once (a SideEffect),
// and queues; an input that gives no key fails that run before any step. n must be at
// least 1.
func MaxRunsPerKey(key string, n int, overflow core.Overflow) Option {
	return func(i *core.WorkflowInfo) error {
		if err := startplan.CheckRunsKey(key); err != nil {
			return fmt.Errorf("max runs per key %q: %w", key, err)
		}
		if err := MaxRuns(n, overflow)(i); err != nil {
			return err
		}
		i.MaxRunsKey = key
		return nil
	}
}

// runKeyGroup is the keyed MaxRuns group of a run no starter gave one: rendered from its
// input as its input type encodes it, recorded once (a SideEffect), so a replay uses the
// group the run acquired even if the flow's key changed since.
func (p *permitsPart) runKeyGroup(c *Context) (string, error) {
	info := c.run.info
	type rendered struct{ Group, Err string }
	var r rendered
	enc := workflow.SideEffect(c.wctx, func(workflow.Context) any {
		raw, err := json.Marshal(c.run.setup.input)
		if err != nil {
			return rendered{Err: fmt.Sprintf("concurrency key %s: encode the input: %v", info.MaxRunsKey, err)}
		}
		g, err := startplan.StartGroup(info, raw)
		if err != nil {
			return rendered{Err: err.Error()}
		}
		return rendered{Group: g}
	})
	if err := enc.Get(&r); err != nil {
		return "", fmt.Errorf("concurrency key %s: %w", info.MaxRunsKey, err)
	}
	if r.Err != "" {
		return "", Permanent(errors.New(r.Err))
	}
	return r.Group, nil
}
