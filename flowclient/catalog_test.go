package flowclient

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowdef"
)

func TestRegistryOfACatalogWithoutWorkersIsTheBuiltins(t *testing.T) {
	r := flowdef.NewStaticRegistry((&core.Catalog{}).Registry())
	assert.Equal(t, core.BuiltinActions, r.Actions)
	assert.Equal(t, core.BuiltinGateResolvers, r.GateTypes)
	assert.Empty(t, r.ItemProviders)
	assert.Empty(t, r.GoFlows)
	assert.Nil(t, r.Services, "services not known: any is accepted")
}
