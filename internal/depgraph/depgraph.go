// Package depgraph finds cycles in the dependency graphs of fan-out items (flow.ForEach's
// DependsOn, a definition's ordered foreach). It is pure Go, free of Temporal, so it is
// deterministic and table-tested.
package depgraph

// Cycle returns one cycle of the dependency graph deps (deps[i] are the positions item i
// depends on, each in range) as positions, the first repeated at the end, or nil when there is none.
// Items are visited in order, so the cycle found is deterministic.
func Cycle(deps [][]int) []int {
	const (
		unseen = iota
		onPath
		done
	)
	mark := make([]int, len(deps))
	var path []int
	var visit func(i int) []int
	visit = func(i int) []int {
		mark[i] = onPath
		path = append(path, i)
		for _, d := range deps[i] {
			switch mark[d] {
			case onPath:
				for k, p := range path {
					if p == d {
						return append(append([]int(nil), path[k:]...), d)
					}
				}
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[i] = done
		return nil
	}
	for i := range deps {
		if mark[i] == unseen {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}
