package flowclient

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/flowdef"
)

func TestRegistryOfACatalogWithoutWorkersIsTheBuiltins(t *testing.T) {
	r := (&Catalog{}).Registry()
	assert.Equal(t, flowdef.BuiltinActions, r.Actions)
	assert.Equal(t, flowdef.BuiltinGateResolvers, r.GateTypes)
	assert.Empty(t, r.ItemProviders)
	assert.Empty(t, r.GoFlows)
}
