package llm_test

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/activities/llm"
)

func ExampleNewScripted() {
	p := llm.NewScripted(
		llm.ScriptRule{Match: "review", Text: "LGTM: no blocking issues"},
		llm.ScriptRule{Text: "I only review code."},
	)
	resp, err := p.Complete(context.Background(), llm.Request{Model: "scripted", Prompt: "Please review this diff"})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	price, _ := llm.DefaultPrices().Lookup(resp.Model)
	fmt.Println(resp.Text)
	fmt.Printf("%d in, %d out, $%s\n", resp.Usage.InputTokens, resp.Usage.OutputTokens, price.Cost(resp.Usage))
	fmt.Println("calls:", p.Calls(), "review rule:", p.RuleCalls(0))
	// Output:
	// LGTM: no blocking issues
	// 6 in, 6 out, $0.000018
	// calls: 1 review rule: 1
}

func ExamplePrice_Cost() {
	price := llm.Price{
		InputPerMTok:  decimal.RequireFromString("0.15"),
		OutputPerMTok: decimal.RequireFromString("0.60"),
	}
	cost := price.Cost(llm.Usage{InputTokens: 1234, OutputTokens: 567})
	fmt.Println(cost)
	fmt.Println(cost.StringFixed(2))
	// Output:
	// 0.0005253
	// 0.00
}

func ExamplePriceTable_Lookup() {
	prices := llm.DefaultPrices()
	p, ok := prices.Lookup("gpt-4o-mini-2024-07-18")
	fmt.Println(ok, p.InputPerMTok, p.OutputPerMTok)
	_, ok = prices.Lookup("my-fine-tune")
	fmt.Println(ok)
	// Output:
	// true 0.15 0.6
	// false
}
