// Package searchattr defines gateflow's custom search attributes: their names, their
// Temporal types and the typed keys workflow code upserts. It also registers them on a
// namespace through the operator service, which is what `flowctl setup` and the embedded
// dev server (for namespaces created before an attribute existed) do.
//
// The set fits SQL visibility, which allows at most 10 Keyword and 3 of each other type of
// custom search attribute per namespace.
package searchattr

import (
	"context"
	"fmt"
	"sort"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/temporal"
)

// Names of gateflow's search attributes.
const (
	Status    = "FlowStatus"
	Category  = "FlowCategory"
	CreatedBy = "FlowCreatedBy"
	Version   = "FlowVersion"
	Waiting   = "FlowWaiting"
	Labels    = "FlowLabels"
	CostUSD   = "FlowCostUSD"
	MaxCost   = "FlowMaxCostUSD"
	Priority  = "FlowPriority"
)

// RunsQuery is the visibility query of gateflow runs: executions with a FlowStatus. Only
// runs set it; entity workflows (catalog, control, mailboxes, semaphores, ledgers, fan-out
// runners) and plans (flowctl plan) never do.
const RunsQuery = Status + " IS NOT NULL"

// Typed keys for workflow code and start options.
var (
	StatusKey    = temporal.NewSearchAttributeKeyKeyword(Status)
	CategoryKey  = temporal.NewSearchAttributeKeyKeyword(Category)
	CreatedByKey = temporal.NewSearchAttributeKeyKeyword(CreatedBy)
	VersionKey   = temporal.NewSearchAttributeKeyKeyword(Version)
	WaitingKey   = temporal.NewSearchAttributeKeyKeywordList(Waiting)
	LabelsKey    = temporal.NewSearchAttributeKeyKeywordList(Labels)
	CostUSDKey   = temporal.NewSearchAttributeKeyFloat64(CostUSD)
	MaxCostKey   = temporal.NewSearchAttributeKeyFloat64(MaxCost)
	PriorityKey  = temporal.NewSearchAttributeKeyInt64(Priority)
)

// All returns every gateflow search attribute with its Temporal type.
func All() map[string]enumspb.IndexedValueType {
	return map[string]enumspb.IndexedValueType{
		Status:    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		Category:  enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		CreatedBy: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		Version:   enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		Waiting:   enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST,
		Labels:    enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST,
		CostUSD:   enumspb.INDEXED_VALUE_TYPE_DOUBLE,
		MaxCost:   enumspb.INDEXED_VALUE_TYPE_DOUBLE,
		Priority:  enumspb.INDEXED_VALUE_TYPE_INT,
	}
}

// Missing compares the attributes a namespace has with All and returns the ones to add.
// An attribute that exists with another type is an error: it cannot be fixed by adding.
func Missing(existing map[string]enumspb.IndexedValueType) (map[string]enumspb.IndexedValueType, error) {
	missing := map[string]enumspb.IndexedValueType{}
	names := make([]string, 0, len(All()))
	for name := range All() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := All()[name]
		got, ok := existing[name]
		switch {
		case !ok:
			missing[name] = want
		case got != want:
			return nil, fmt.Errorf("search attribute %s exists with type %s, gateflow needs %s", name, got, want)
		}
	}
	return missing, nil
}

// Ensure registers the missing gateflow search attributes on namespace and reports which
// it added. It is idempotent.
func Ensure(ctx context.Context, op operatorservice.OperatorServiceClient, namespace string) ([]string, error) {
	resp, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of %s: %w", namespace, err)
	}
	missing, err := Missing(resp.GetCustomAttributes())
	if err != nil {
		return nil, err
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if _, err := op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	}); err != nil {
		return nil, fmt.Errorf("add search attributes to %s: %w", namespace, err)
	}
	added := make([]string, 0, len(missing))
	for name := range missing {
		added = append(added, name)
	}
	sort.Strings(added)
	return added, nil
}
