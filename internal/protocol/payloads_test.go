package protocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
)

func TestDecodeMemo(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	statePayload, err := dc.ToPayload(map[string]any{"workflow": "w", "status": "completed"})
	require.NoError(t, err)
	number, err := dc.ToPayload(3)
	require.NoError(t, err)
	memo := &commonpb.Memo{Fields: map[string]*commonpb.Payload{MemoState: statePayload, "bad": number}}
	var st struct{ Workflow, Status string }
	ok, err := DecodeMemo(memo, MemoState, &st)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "completed", st.Status)

	ok, err = DecodeMemo(memo, "missing", &st)
	assert.NoError(t, err)
	assert.False(t, ok)
	ok, err = DecodeMemo(memo, "bad", &st)
	assert.ErrorContains(t, err, "decode memo bad")
	assert.False(t, ok)
}

func TestIDsKeepTheirRecordedValues(t *testing.T) {
	// These IDs are in running histories: they must never change.
	assert.Equal(t, "gateflow-catalog-q", CatalogID("q"))
	assert.Equal(t, "gateflow-control@q", ControlID("q"))
	assert.Equal(t, "gateflow-semaphore/key:k@q", SemaphoreID("key:k", "q"))
	assert.Equal(t, "gateflow-schedule/hello/0@q", ScheduleID("hello", 0, "q"))
}

func TestTaggedQueues(t *testing.T) {
	assert.Equal(t, "q", TaggedQueue("q", nil))
	assert.Equal(t, "q@eu+gpu", TaggedQueue("q", []string{"gpu", "eu"}))
	for queue, base := range map[string]string{"q": "q", "q@eu+gpu": "q", "q@gpu": "q", "team@x@gpu": "team@x", "q@GPU": "q@GPU", "@gpu": "@gpu", "q@": "q@"} {
		assert.Equal(t, base, BaseQueue(queue), queue)
	}
	qs, err := TaggedQueues("q", []string{"gpu", "eu"})
	require.NoError(t, err)
	assert.Equal(t, []string{"q", "q@eu", "q@gpu", "q@eu+gpu"}, qs)
	_, err = TaggedQueues("q", []string{"a", "b", "c", "d", "e"})
	assert.ErrorContains(t, err, "at most 4")
	assert.ErrorContains(t, ValidateTags([]string{"GPU"}), `tag "GPU"`)
	assert.ErrorContains(t, ValidateTags([]string{"a", "a"}), "tag a given twice")
}
