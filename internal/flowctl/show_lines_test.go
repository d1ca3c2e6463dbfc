package flowctl

import (
	"bytes"
	"testing"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/runs"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
)

func TestBudgetLineSaysWhatIsUnconfirmed(t *testing.T) {
	st := &runs.State{CostUSD: decimal.RequireFromString("0.25"), Steps: []runs.Step{
		{Name: "a"}, {Name: "b", UnconfirmedUSD: decimal.RequireFromString("0.15")},
	}}
	assert.Equal(t, "$0.2500; $0.15 of it unconfirmed (attempts lost in flight, charged their reservation)", budgetLine(st))
	st.Steps[1].UnconfirmedUSD = decimal.Zero
	assert.Equal(t, "$0.2500", budgetLine(st))
}

func TestShowListsKeptVotes(t *testing.T) {
	var out bytes.Buffer
	printKeptVotes(&out, &runs.State{})
	assert.Empty(t, out.String())
	printKeptVotes(&out, &runs.State{KeptVotes: []approval.Vote{{Gate: "ship", Kind: approval.Approve, By: "alice"}, {Gate: "shpi", Kind: approval.Reject, By: "bob"}}})
	assert.Equal(t, "Kept      approve ship by alice, reject shpi by bob (gates not reached yet: they count when a gate of that name opens, if the voter may decide it)\n", out.String())
}
