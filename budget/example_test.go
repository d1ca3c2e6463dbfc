package budget_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/budget"
)

// A run's cap comes from the start option when there is one, else the flow's default,
// else the worker's.
func ExampleResolveCap() {
	flowDefault := budget.MustParseUSD("2.00")
	workerDefault := budget.MustParseUSD("$10")
	startOption, err := budget.ParseUSD(" $0.50 ")
	if err != nil {
		panic(err)
	}

	fmt.Println(budget.ResolveCap(&startOption, &flowDefault, &workerDefault))
	fmt.Println(budget.ResolveCap(nil, &flowDefault, &workerDefault))
	fmt.Println(budget.ResolveCap(nil, nil, &workerDefault))
	fmt.Println(budget.ResolveCap(nil, nil, nil))
	// Output:
	// $0.50 (start)
	// $2.00 (flow)
	// $10.00 (worker)
	// none
}

// Each cost-bearing step reserves its own limit before it runs and settles its real cost
// after. A step that would not fit in what is left is never dispatched; a step that cost more
// than its limit can take the spend over the cap, which the caller then acts on.
func ExampleLedger() {
	now := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	l := budget.NewLedger(budget.Cap{Amount: budget.MustParseUSD("1.00"), Set: true, Source: budget.SourceStart})

	steps := []struct{ name, limit, cost string }{
		{"draft", "0.50", "0.45"},
		{"review", "0.30", "0.38"},
		{"polish", "0.20", "0.05"},
		{"translate", "0.10", "0.10"},
	}
	for _, s := range steps {
		r, err := l.Reserve(s.name, decimal.RequireFromString(s.limit))
		if errors.Is(err, budget.ErrExceeded) {
			fmt.Println(err)
			continue
		}
		crossed, exceeded := l.Settle(r, decimal.RequireFromString(s.cost), s.name, now)
		fmt.Printf("%s cost %s\n", s.name, budget.FormatUSD(l.Charges[len(l.Charges)-1].Amount))
		for _, w := range crossed {
			fmt.Println(w)
		}
		if exceeded != nil {
			fmt.Println(exceeded)
		}
	}
	left, _ := l.Remaining()
	c := l.Charges[1]
	fmt.Printf("spent %s, left %s; review overshot its %s limit by %s\n",
		budget.FormatUSD(l.Spent), budget.FormatUSD(left), budget.FormatUSD(c.Limit), budget.FormatUSD(c.Overshoot))
	// Output:
	// draft cost $0.45
	// review cost $0.38
	// budget: 80% of the $1.00 cap reached (spent $0.83)
	// budget: step polish needs $0.20 but only $0.17 of the $1.00 cap is left (spent $0.83)
	// translate cost $0.10
	// spent $0.93, left $0.07; review overshot its $0.30 limit by $0.08
}

// A parallel wave reserves all its steps at once, or none of them.
func ExampleLedger_ReserveAll() {
	l := budget.NewLedger(budget.Cap{Amount: budget.MustParseUSD("1"), Set: true})
	err := l.ReserveAll([]budget.Item{
		{Key: "en", Amount: budget.MustParseUSD("0.40")},
		{Key: "fr", Amount: budget.MustParseUSD("0.40")},
		{Key: "de", Amount: budget.MustParseUSD("0.40")},
	})
	fmt.Println(err)
	fmt.Println("reserved", budget.FormatUSD(l.Reserved))
	// Output:
	// budget: parallel steps en, fr, de need $1.20 together but only $1.00 of the $1.00 cap is left (spent $0.00)
	// reserved $0.00
}

// The monthly quota of a workflow type lives in its own ledger entity workflow; a retried
// charge is counted once, and an exhausted quota refuses new runs.
func ExampleQuota() {
	now := time.Date(2026, 11, 30, 23, 30, 0, 0, time.FixedZone("CET", 3600))
	scope := budget.WorkflowScope("release")
	month := budget.MonthOf(now) // UTC: 22:30 on 30 November
	fmt.Println(budget.LedgerID(scope, month))

	q := budget.NewQuota(scope, month)
	q.Limit, q.Set = budget.MustParseUSD("50"), true
	fmt.Println(q.Charge(budget.ChargeKey("run-1", "deploy"), budget.MustParseUSD("30")))
	fmt.Println(q.Charge(budget.ChargeKey("run-1", "deploy"), budget.MustParseUSD("30")))
	fmt.Println(q.Check())
	q.Charge(budget.ChargeKey("run-2", "deploy"), budget.MustParseUSD("20"))
	fmt.Println(q.Check())
	// Output:
	// gateflow-ledger/workflow:release/2026-11
	// true
	// false
	// <nil>
	// monthly quota of workflow release is exhausted: $50.00 of $50.00 spent in 2026-11
}
