package searchattr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

func TestAllFitsSQLVisibility(t *testing.T) {
	all := All()
	assert.Len(t, all, 9)
	perType := map[enumspb.IndexedValueType]int{}
	for _, typ := range all {
		perType[typ]++
	}
	for typ, n := range perType {
		limit := 3
		if typ == enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			limit = 10
		}
		assert.LessOrEqual(t, n, limit, "SQL visibility allows %d custom attributes of type %s", limit, typ)
	}
	assert.Equal(t, map[enumspb.IndexedValueType]int{
		enumspb.INDEXED_VALUE_TYPE_KEYWORD:      4,
		enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST: 2,
		enumspb.INDEXED_VALUE_TYPE_DOUBLE:       2,
		enumspb.INDEXED_VALUE_TYPE_INT:          1,
	}, perType)
	all[Status] = enumspb.INDEXED_VALUE_TYPE_TEXT
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, All()[Status], "All returns a fresh map")
}

func TestKeysMatchAll(t *testing.T) {
	keys := []struct {
		key  temporal.SearchAttributeKey
		want enumspb.IndexedValueType
	}{
		{StatusKey, enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		{CategoryKey, enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		{CreatedByKey, enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		{VersionKey, enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		{WaitingKey, enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST},
		{LabelsKey, enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST},
		{CostUSDKey, enumspb.INDEXED_VALUE_TYPE_DOUBLE},
		{MaxCostKey, enumspb.INDEXED_VALUE_TYPE_DOUBLE},
		{PriorityKey, enumspb.INDEXED_VALUE_TYPE_INT},
	}
	require.Len(t, keys, len(All()))
	for _, k := range keys {
		t.Run(k.key.GetName(), func(t *testing.T) {
			typ, ok := All()[k.key.GetName()]
			require.True(t, ok, "key %s is in All", k.key.GetName())
			assert.Equal(t, k.want, typ)
			assert.Equal(t, k.want, k.key.GetValueType(), "the typed key has the registered type")
		})
	}
}

func TestMissing(t *testing.T) {
	withExtra := All()
	withExtra["SomethingElse"] = enumspb.INDEXED_VALUE_TYPE_TEXT
	partial := All()
	delete(partial, Waiting)
	delete(partial, Priority)
	tests := []struct {
		name     string
		existing map[string]enumspb.IndexedValueType
		want     map[string]enumspb.IndexedValueType
		wantErr  string
	}{
		{"none existing", nil, All(), ""},
		{"all existing", All(), map[string]enumspb.IndexedValueType{}, ""},
		{"others are ignored", withExtra, map[string]enumspb.IndexedValueType{}, ""},
		{"some missing", partial, map[string]enumspb.IndexedValueType{
			Waiting: enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST, Priority: enumspb.INDEXED_VALUE_TYPE_INT,
		}, ""},
		{"wrong type", map[string]enumspb.IndexedValueType{Status: enumspb.INDEXED_VALUE_TYPE_TEXT},
			nil, "search attribute FlowStatus exists with type Text, gateflow needs Keyword"},
		{"wrong type among good ones", map[string]enumspb.IndexedValueType{
			Status: enumspb.INDEXED_VALUE_TYPE_KEYWORD, CostUSD: enumspb.INDEXED_VALUE_TYPE_INT,
		}, nil, "search attribute FlowCostUSD exists with type Int, gateflow needs Double"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Missing(tt.existing)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
