package flow

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/internal/protocol"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// parentInfo is what a child run learns from its parent.
type parentInfo struct {
	ParentID    string    `json:"parent_id"`
	ParentRunID string    `json:"parent_run_id"`
	Step        string    `json:"step"`
	Depth       int       `json:"depth"`
	Guards      Guards    `json:"guards"`
	TreeTokens  int64     `json:"tree_tokens"`
	StartedAt   time.Time `json:"started_at"`
	CreatedBy   string    `json:"created_by,omitempty"`
	// CapUSD is the child's money cap: what the parent had left, or less.
	CapUSD string `json:"cap_usd,omitempty"`
}

// childrenPart is what a run knows of its family: its parent (for a child run) and the
// child runs it started, with what they reported when they ended.
type childrenPart struct {
	parent *parentInfo
	// count is the child runs started; tokens what they reported using.
	count  int
	tokens runs.Tokens
	// reports are the children's reports by child workflow ID: a child sends its record
	// (status, cost, tokens, steps) to its parent just before it ends.
	reports map[string]runs.Child
	// served are the child flows (by "flow@queue") a worker was found to serve (child.go).
	served map[string]bool
}

// readParent reads what the parent of a child run put in its Memo; nil for a top-level run.
func readParent(wctx workflow.Context) (*parentInfo, error) {
	p, ok := workflow.GetInfo(wctx).Memo.GetFields()[protocol.MemoParent]
	if !ok {
		return nil, nil
	}
	var pi parentInfo
	if err := converter.GetDefaultDataConverter().FromPayload(p, &pi); err != nil {
		return nil, fmt.Errorf("the parent's memo %s cannot be read: %w", protocol.MemoParent, err)
	}
	return &pi, nil
}

// reportToParent tells the parent (if any) how the run ended. The signal is in the
// parent's history before the child's completion, so the parent has it when its child
// step returns.
func (p *childrenPart) reportToParent(wctx workflow.Context, st *runs.State) {
	if p.parent == nil {
		return
	}
	info := workflow.GetInfo(wctx)
	rep := runs.Child{
		ID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID, Workflow: st.Workflow, Status: st.Status,
		CostUSD: st.CostUSD, Tokens: st.Tokens, Steps: st.Steps, Error: st.Error,
	}
	err := workflow.SignalExternalWorkflow(wctx, p.parent.ParentID, p.parent.ParentRunID, protocol.SignalChildReport, rep).Get(wctx, nil)
	if err != nil {
		workflow.GetLogger(wctx).Warn("report to parent run", "parent", p.parent.ParentID, "error", err)
	}
}

// collectReports takes the child reports that have arrived.
func (p *childrenPart) collectReports(wctx workflow.Context) {
	ch := workflow.GetSignalChannelWithOptions(wctx, protocol.SignalChildReport, workflow.SignalChannelOptions{Description: descChildReport})
	for {
		var rep runs.Child
		if !ch.ReceiveAsync(&rep) {
			return
		}
		p.reports[rep.ID] = rep
	}
}

// treeTokens is what the run tree used so far, as far as this run knows: the tokens the
// parent's tree had used when this run started, plus this run's (which include its
// children's).
func (p *childrenPart) treeTokens(st *runs.State) int64 {
	t := st.Tokens.Total()
	if p.parent != nil {
		t += p.parent.TreeTokens
	}
	return t
}
