package searchattr

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"google.golang.org/grpc"
)

// fakeOperator implements the two operator calls Ensure makes; any other call panics.
type fakeOperator struct {
	operatorservice.OperatorServiceClient
	existing map[string]enumspb.IndexedValueType
	listErr  error
	addErr   error
	added    []*operatorservice.AddSearchAttributesRequest
}

func (f *fakeOperator) ListSearchAttributes(_ context.Context, req *operatorservice.ListSearchAttributesRequest, _ ...grpc.CallOption) (*operatorservice.ListSearchAttributesResponse, error) {
	if f.listErr != nil {
		return nil, f.listErr
	}
	return &operatorservice.ListSearchAttributesResponse{CustomAttributes: f.existing}, nil
}

func (f *fakeOperator) AddSearchAttributes(_ context.Context, req *operatorservice.AddSearchAttributesRequest, _ ...grpc.CallOption) (*operatorservice.AddSearchAttributesResponse, error) {
	f.added = append(f.added, req)
	if f.addErr != nil {
		return nil, f.addErr
	}
	return &operatorservice.AddSearchAttributesResponse{}, nil
}

func TestEnsure(t *testing.T) {
	some := All()
	delete(some, Labels)
	delete(some, Category)
	tests := []struct {
		name      string
		op        *fakeOperator
		wantAdded []string
		wantCalls int
		wantErr   string
	}{
		{"fresh namespace", &fakeOperator{}, []string{Category, CostUSD, CreatedBy, Labels, MaxCost, Priority, Status, Version, Waiting}, 1, ""},
		{"already there", &fakeOperator{existing: All()}, nil, 0, ""},
		{"two missing", &fakeOperator{existing: some}, []string{Category, Labels}, 1, ""},
		{"list fails", &fakeOperator{listErr: errors.New("denied")}, nil, 0, "list search attributes of ns: denied"},
		{"add fails", &fakeOperator{addErr: errors.New("limit")}, nil, 1, "add search attributes to ns: limit"},
		{"wrong type", &fakeOperator{existing: map[string]enumspb.IndexedValueType{Priority: enumspb.INDEXED_VALUE_TYPE_DOUBLE}}, nil, 0,
			"search attribute FlowPriority exists with type Double, gateflow needs Int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			added, err := Ensure(context.Background(), tt.op, "ns")
			require.Len(t, tt.op.added, tt.wantCalls)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantAdded, added)
			if tt.wantCalls == 1 {
				req := tt.op.added[0]
				assert.Equal(t, "ns", req.GetNamespace())
				assert.Len(t, req.GetSearchAttributes(), len(tt.wantAdded))
				for _, name := range tt.wantAdded {
					assert.Equal(t, All()[name], req.GetSearchAttributes()[name])
				}
			}
		})
	}
}
