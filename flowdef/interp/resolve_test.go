package interp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/flowdef"
)

// A run pinned to a definition this worker never had (it was edited before a restart)
// replays from the canonical JSON recorded in its history.
func TestResolveRecordedDefinition(t *testing.T) {
	v1, err := flowdef.Parse("v1.yaml", []byte("name: p\nsteps:\n  - {id: one, set: {x: 1}}\n"))
	require.NoError(t, err)
	v2, err := flowdef.Parse("v2.yaml", []byte("name: p\nsteps:\n  - {id: two, set: {x: 2}}\n"))
	require.NoError(t, err)
	live, err := NewLive(v2)
	require.NoError(t, err)

	got, err := live.resolve(pinned{Name: v1.Name, Hash: v1.Hash(), Canonical: v1.Canonical()})
	require.NoError(t, err)
	assert.Equal(t, v1.Hash(), got.Hash())
	require.Len(t, got.Steps, 1)
	assert.Equal(t, "one", got.Steps[0].ID)

	got, err = live.resolve(pinned{Name: v2.Name, Hash: v2.Hash(), Canonical: v2.Canonical()})
	require.NoError(t, err)
	assert.Same(t, v2, got)

	_, err = live.resolve(pinned{Name: "p", Hash: "x", Canonical: []byte("{")})
	assert.Error(t, err)
}
