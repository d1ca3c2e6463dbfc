package interp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gateflow/gateflow/internal/depgraph"
)

// itemDependencies reads the ids and depends_on lists of a foreach's items (for ordered
// dispatch and skip_dependents). Items without any depends_on (plain values, say) have no
// dependencies: it returns nil, nil and they start in list order. Otherwise every item
// must be a map with a non-empty string id, unique among the items, and an optional
// depends_on list of other items' ids (a provider's items always have both). It returns
// the ids and, per item, the positions of the items it depends on, or an error naming the
// first item that does not fit or the first dependency cycle.
func itemDependencies(items []any) ([]string, [][]int, error) {
	if !slices.ContainsFunc(items, func(it any) bool {
		m, ok := it.(map[string]any)
		return ok && m["depends_on"] != nil
	}) {
		return nil, nil, nil
	}
	ids := make([]string, len(items))
	pos := make(map[string]int, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("item %d: items with depends_on are maps with an id; this one is %T", i, it)
		}
		id, _ := m["id"].(string)
		if id == "" {
			return nil, nil, fmt.Errorf("item %d: items with depends_on need a non-empty string id", i)
		}
		if j, dup := pos[id]; dup {
			return nil, nil, fmt.Errorf("items %d and %d: both have id %q", j, i, id)
		}
		ids[i], pos[id] = id, i
	}
	deps := make([][]int, len(items))
	for i, it := range items {
		raw, ok := it.(map[string]any)["depends_on"]
		if !ok || raw == nil {
			continue
		}
		list, ok := raw.([]any)
		if !ok {
			return nil, nil, fmt.Errorf("item %q: depends_on is %T, want a list of item ids", ids[i], raw)
		}
		for _, d := range list {
			s, _ := d.(string)
			j, ok := pos[s]
			switch {
			case !ok:
				return nil, nil, fmt.Errorf("item %q: depends on %v, which is not an item of this foreach", ids[i], d)
			case j == i:
				return nil, nil, fmt.Errorf("item %q: depends on itself", ids[i])
			}
			deps[i] = append(deps[i], j)
		}
	}
	if c := depgraph.Cycle(deps); c != nil {
		names := make([]string, len(c))
		for k, i := range c {
			names[k] = ids[i]
		}
		return nil, nil, fmt.Errorf("items depend on each other in a cycle: %s", strings.Join(names, " -> "))
	}
	return ids, deps, nil
}
