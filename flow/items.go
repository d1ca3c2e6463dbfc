package flow

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/runs"

	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/internal/protocol"
)

// Item is one thing a fan-out runs over, as an ItemProvider lists it. ForEach over
// []Item names each item by its ID and, with Ordered or SkipDependents, follows DependsOn
// (IDs of other items of the same list) unless the options say otherwise.
type Item struct {
	// ID names the item: unique in its list.
	ID string `json:"id"`
	// Type and Ref say what the item is and where it lives ("ticket", "JIRA-12").
	Type string `json:"type,omitempty"`
	Ref  string `json:"ref,omitempty"`
	// Context are values the item's work reads (item.<key> in definitions).
	Context map[string]string `json:"context,omitempty"`
	// DependsOn lists the IDs of the items this one waits for.
	DependsOn []string `json:"depends_on,omitempty"`
}

// ItemProvider lists the items of a fan-out: tickets of a project, hosts of a pool, files
// of a change. Register providers on the worker (WorkerOptions.ItemProviders); a handler
// reads a list with Items. The provider runs as an activity, so it may do I/O, and its
// result is recorded in history: a replay sees the same items.
type ItemProvider interface {
	// Name is the provider's name, as Items and definitions refer to it.
	Name() string
	// Items lists the items of scope matching filter.
	Items(ctx context.Context, scope string, filter map[string]string) ([]Item, error)
}

// Items lists the items the provider named provider gives for scope and filter, as the
// step name. A provider no worker has fails the step with a clear error.
func (c *Context) Items(name, provider, scope string, filter map[string]string) ([]Item, error) {
	var out []Item
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
type itemActivities struct{ providers map[string]ItemProvider }

func newItemActivities(list []ItemProvider) itemActivities {
	m := map[string]ItemProvider{}
	for _, p := range list {
		if p != nil {
			m[p.Name()] = p
		}
	}
	return itemActivities{providers: m}
}

func (a itemActivities) items(ctx context.Context, r protocol.ItemsRequest) ([]Item, error) {
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
func itemOptions[T any](items []T, opts ForEachOptions) ForEachOptions {
	list, ok := any(items).([]Item)
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
