package flow

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/items"

	"github.com/gateflow/gateflow/runs"

	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/internal/protocol"
)

// Items lists the items the provider named provider gives for scope and filter, as the
// step name. A provider no worker has fails the step with a clear error.
func (c *Context) Items(name, provider, scope string, filter map[string]string) ([]items.Item, error) {
	var out []items.Item
	cl := call{name: name, kind: runs.KindActivity, activity: protocol.ItemsActivity,
		args: []any{protocol.ItemsRequest{Provider: provider, Scope: scope, Filter: filter}}, opts: c.options(nil)}
	cl.summary = fmt.Sprintf("%s (items of %s)", name, provider)
	cl.nonRetryable = []string{string(ErrorInvalidStep)}
	err := c.settle(c.dispatch(cl), &out, func() outcome {
		return outcome{output: fmt.Sprintf("%d items from %s", len(out), provider)}
	})
	return out, err
}

// itemActivities answer Items with the worker's providers.
type itemActivities struct{ providers map[string]items.Provider }

func newItemActivities(list []items.Provider) itemActivities {
	m := map[string]items.Provider{}
	for _, p := range list {
		if p != nil {
			m[p.Name()] = p
		}
	}
	return itemActivities{providers: m}
}

func (a itemActivities) items(ctx context.Context, r protocol.ItemsRequest) ([]items.Item, error) {
	p, ok := a.providers[r.Provider]
	if !ok {
		known := make([]string, 0, len(a.providers))
		for n := range a.providers {
			known = append(known, n)
		}
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("no item provider %q on this worker (known: %s)", r.Provider, strings.Join(slices.Sorted(slices.Values(known)), ", ")),
			string(ErrorInvalidStep), nil)
	}
	items, err := p.Items(ctx, r.Scope, r.Filter)
	if err != nil {
		return nil, fmt.Errorf("item provider %s: %w", r.Provider, err)
	}
	seen := map[string]bool{}
	for _, it := range items {
		if it.ID == "" || seen[it.ID] {
			return nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("item provider %s: item IDs must be unique and not empty (got %q)", r.Provider, it.ID), string(ErrorInvalidStep), nil)
		}
		seen[it.ID] = true
	}
	return items, nil
}

// itemOptions fills the naming and dependencies of a fan-out over []Item from the items.
func itemOptions[T any](in []T, opts ForEachOptions) ForEachOptions {
	list, ok := any(in).([]items.Item)
	if !ok {
		return opts
	}
	if opts.ItemName == nil {
		opts.ItemName = func(i int) string { return list[i].ID }
	}
	if opts.DependsOn == nil {
		index := make(map[string]int, len(list))
		for i, it := range list {
			index[it.ID] = i
		}
		opts.DependsOn = func(i int) []int {
			var deps []int
			for _, id := range list[i].DependsOn {
				if j, ok := index[id]; ok {
					deps = append(deps, j)
				}
			}
			return deps
		}
	}
	return opts
}
