package flowctl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
)

// startFile validates the definition file against the task queue's registry and starts
// it on the generic definition flow with raw (a JSON object, or nothing) as its inputs.
func (a *app) startFile(ctx context.Context, c *flowclient.Client, file string, raw json.RawMessage, so core.StartOptions) (*core.Run, error) {
	base, err := c.Registry(ctx)
	if err != nil {
		if errors.Is(err, core.ErrNoCatalog) {
			return nil, fmt.Errorf("start --file: %w (no worker serves the task queue)", err)
		}
		return nil, fmt.Errorf("start --file: %w", err)
	}
	if !base.HasGoFlow(interp.DefinitionFlowName) {
		return nil, usageErr("start --file: the workers of task queue %s do not serve %s (run a flow-worker of this version, or a worker using package flowdef/serve)",
			c.TaskQueue(), interp.DefinitionFlowName)
	}
	reg := &flowdef.StaticRegistry{Actions: base.Actions, Fallback: base.Fallback, ItemProviders: base.ItemProviders,
		GateTypes: base.GateTypes, GoFlows: base.GoFlows, Services: base.Services, MCPServers: base.MCPServers, Dir: filepath.Dir(file)}
	data, err := flowdef.ReadFile(file)
	if err != nil {
		return nil, usageErr("start --file: cannot read the file: %v", rootCause(err))
	}
	def, err := flowdef.Check(file, data, reg)
	if err != nil {
		errs := flowdef.Errors(err)
		if len(errs) == 0 {
			errs = []flowdef.Error{{Pos: flowdef.Pos{File: file}, Message: err.Error()}}
		}
		for _, e := range errs {
			fmt.Fprintln(a.stderr, e.String())
		}
		return nil, &exitError{code: ExitUsage, err: fmt.Errorf("%s: %s, not started", file, plural(len(errs), "error"))}
	}
	inputs := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &inputs); err != nil || inputs == nil {
			return nil, usageErr("--input of a definition must be a JSON object: %s", raw)
		}
	}
	if err := interp.CheckInputs(def, inputs); err != nil {
		return nil, usageErr("start --file: %v, not started", err)
	}
	if so.ID == "" {
		var b [5]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("start --file: run ID: %w", err)
		}
		so.ID = def.Name + "-" + hex.EncodeToString(b[:])
	}
	env, err := interp.StartOptions(def)
	if err != nil {
		return nil, usageErr("start --file: %v", err)
	}
	return c.Start(ctx, interp.DefinitionFlowName, interp.NewDefinitionInput(def, inputs), withEnvelope(so, env))
}

// withEnvelope is so with what the definition's envelope says (env, interp.StartOptions)
// wherever so does not say otherwise: the flags given win, labels are merged.
func withEnvelope(so, env core.StartOptions) core.StartOptions {
	if so.MaxCostUSD == nil {
		so.MaxCostUSD = env.MaxCostUSD
	}
	if so.BudgetPolicy == "" {
		so.BudgetPolicy = env.BudgetPolicy
	}
	if so.BudgetPause == 0 {
		so.BudgetPause = env.BudgetPause
	}
	if so.Priority == 0 {
		so.Priority = env.Priority
	}
	if len(so.WorkerTags) == 0 {
		so.WorkerTags = env.WorkerTags
	}
	if so.Guards == nil {
		so.Guards = env.Guards
	}
	if len(env.Labels) > 0 {
		labels := maps.Clone(env.Labels)
		maps.Copy(labels, so.Labels)
		so.Labels = labels
	}
	return so
}
