package depgraph

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCycle(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps [][]int
		want []int
	}{
		{"empty", nil, nil},
		{"no edges", [][]int{nil, nil}, nil},
		{"chain", [][]int{nil, {0}, {1}}, nil},
		{"diamond", [][]int{nil, {0}, {0}, {1, 2}}, nil},
		{"two", [][]int{{1}, {0}}, []int{0, 1, 0}},
		{"behind a chain", [][]int{nil, {2}, {3}, {1}}, []int{1, 2, 3, 1}},
		{"self", [][]int{{0}}, []int{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Cycle(tc.deps))
		})
	}
}
