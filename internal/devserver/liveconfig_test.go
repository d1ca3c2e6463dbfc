package devserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.temporal.io/server/common/dynamicconfig"
)

// TestForcedSearchAttributeRefreshEnds: the dev server forces a search attribute cache
// refresh on every read only until its namespace's attributes are in place; the other
// settings stay.
func TestForcedSearchAttributeRefreshEnds(t *testing.T) {
	live, refreshed := liveConfig(dynamicConfig())
	key := dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key()
	assert.Len(t, live.GetValue(key), 1, "forced while the attributes are being put in place")
	refreshed()
	assert.Empty(t, live.GetValue(key), "then the server's default (off)")
	assert.Len(t, live.GetValue(dynamicconfig.WorkflowPauseEnabled.Key()), 1, "the other settings stay")
}
