package items

import "context"

// Item is one thing a fan-out runs over, as a Provider lists it. flow.ForEach over []Item
// names each item by its ID and, with flow.ForEachOptions.Ordered or flow.SkipDependents,
// follows DependsOn (IDs of other items of the same list) unless the options say
// otherwise.
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

// Provider lists the items of a fan-out: tickets of a project, hosts of a pool, files of a
// change. Register providers on the worker (flow.WorkerOptions.ItemProviders); a handler
// reads a list with flow.Context.Items. The provider runs as an activity, so it may do I/O, and its
// result is recorded in history: a replay sees the same items.
type Provider interface {
	// Name is the provider's name, as flow.Context.Items and definitions refer to it.
	Name() string
	// Items lists the items of scope matching filter.
	Items(ctx context.Context, scope string, filter map[string]string) ([]Item, error)
}
