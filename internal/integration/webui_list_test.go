package integration

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/protocol"
)

// TestWebUIRunsLinkListsRunsOnly reads the query of the dev server's Web UI link (the one
// flow-worker --dev and the README print) and asks the real server's visibility for it:
// the list has a run and none of gateflow's entity workflows (catalog, control, mailbox)
// nor a plan's execution, all of which exist unfiltered.
func TestWebUIRunsLinkListsRunsOnly(t *testing.T) {
	link, err := url.Parse(devserver.RunsListURL("http://127.0.0.1:8233", "default"))
	require.NoError(t, err)
	assert.Equal(t, "/namespaces/default/workflows", link.Path)
	assert.NotContains(t, link.RawQuery, "+", "spaces are %20, which every URL parser reads as spaces")
	query := link.Query().Get("query")
	require.NotEmpty(t, query, "the link filters the list: %s", link)

	ctx := ctxT(t, 2*time.Minute)
	c := shared.client
	run, err := c.Start(ctx, "hello", map[string]string{"name": "list"}, core.StartOptions{})
	require.NoError(t, err)
	_, err = c.Wait(ctx, run.ID)
	require.NoError(t, err)
	keyed, err := c.Start(ctx, "test.keyed", map[string]string{"key": "webui-list-" + run.ID}, core.StartOptions{}) // subscribes to a mailbox
	require.NoError(t, err)
	r := flowctlRun(t, "", "plan", "hello", "--input", `{"name":"plan"}`)
	require.Equal(t, 0, r.code, r.stderr)

	list := func(q string) []*workflowpb.WorkflowExecutionInfo {
		var all []*workflowpb.WorkflowExecutionInfo
		req := listRequest(q)
		for {
			resp, err := shared.tc.ListWorkflow(ctx, req)
			require.NoError(t, err, q)
			all = append(all, resp.GetExecutions()...)
			if len(resp.GetNextPageToken()) == 0 {
				return all
			}
			req.NextPageToken = resp.GetNextPageToken()
		}
	}
	kinds := func(infos []*workflowpb.WorkflowExecutionInfo) (ids map[string]bool, entities, plans []string) {
		ids = map[string]bool{}
		for _, e := range infos {
			id, typ := e.GetExecution().GetWorkflowId(), e.GetType().GetName()
			ids[id] = true
			switch {
			case strings.HasPrefix(id, "plan-"):
				plans = append(plans, id)
			case isEntityType(typ):
				entities = append(entities, typ+" "+id)
			}
		}
		return ids, entities, plans
	}
	var allEntities, allPlans []string
	require.Eventually(t, func() bool {
		ids, entities, plans := kinds(list(""))
		allEntities, allPlans = entities, plans
		return ids[run.ID] && ids[keyed.ID] && len(plans) > 0 && hasType(entities, protocol.CatalogWorkflowType) &&
			hasType(entities, protocol.MailboxWorkflowType)
	}, 30*time.Second, 200*time.Millisecond, "unfiltered, the list has the runs, a plan and the catalog and mailbox entities")

	ids, entities, plans := kinds(list(query))
	assert.True(t, ids[run.ID], "the filtered list has the completed run %s", run.ID)
	assert.True(t, ids[keyed.ID], "the filtered list has the waiting run %s", keyed.ID)
	assert.Empty(t, entities, "no entity workflow in the filtered list (of %d unfiltered)", len(allEntities))
	assert.Empty(t, plans, "no plan in the filtered list (of %d unfiltered)", len(allPlans))
}

// isEntityType reports whether typ is one of gateflow's own workflow types, not a flow's.
func isEntityType(typ string) bool {
	switch typ {
	case protocol.CatalogWorkflowType, protocol.ControlWorkflowType, protocol.MailboxWorkflowType,
		protocol.SemaphoreWorkflowType, protocol.LedgerWorkflowType, protocol.FanoutWorkflowType:
		return true
	}
	return false
}

func hasType(entities []string, typ string) bool {
	for _, e := range entities {
		if strings.HasPrefix(e, typ+" ") {
			return true
		}
	}
	return false
}
