package flowctl

import (
	"testing"

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
