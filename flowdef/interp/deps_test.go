package interp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestItemDependencies(t *testing.T) {
	item := func(id string, deps ...any) map[string]any {
		m := map[string]any{"id": id}
		if deps != nil {
			m["depends_on"] = deps
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		items []any
		ids   []string
		deps  [][]int
		err   string
	}{
		{name: "chain", items: []any{item("a"), item("b", "a"), item("c", "a", "b")},
			ids: []string{"a", "b", "c"}, deps: [][]int{nil, {0}, {0, 1}}},
		{name: "forward reference", items: []any{item("b", "a"), item("a")},
			ids: []string{"b", "a"}, deps: [][]int{{1}, nil}},
		{name: "no dependencies at all", items: []any{"x", map[string]any{"id": "a"}}},
		{name: "not a map", items: []any{"x", item("a", "x")}, err: "item 0: items with depends_on are maps with an id; this one is string"},
		{name: "no id", items: []any{map[string]any{"x": 1}, item("a", "b")}, err: "item 0: items with depends_on need a non-empty string id"},
		{name: "duplicate id", items: []any{item("a"), item("a", "a")}, err: `items 0 and 1: both have id "a"`},
		{name: "unknown dependency", items: []any{item("a", "zz")}, err: `item "a": depends on zz, which is not an item of this foreach`},
		{name: "self", items: []any{item("a", "a")}, err: `item "a": depends on itself`},
		{name: "depends_on not a list", items: []any{map[string]any{"id": "a", "depends_on": "b"}}, err: `item "a": depends_on is string, want a list of item ids`},
		{name: "cycle", items: []any{item("a"), item("b", "c"), item("c", "d"), item("d", "b")},
			err: "items depend on each other in a cycle: b -> c -> d -> b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, deps, err := itemDependencies(tc.items)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.ids, ids)
			assert.Equal(t, tc.deps, deps)
		})
	}
}
