package testflows

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/service"

	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/flow"
)

// Services of the service tests: RatedService allows RatedPerSecond steps a second across
// the workers; FlakyService has a breaker that trips after FlakyTrip failures in a row and
// stays open FlakyOpen.
const (
	RatedService   = "rated"
	RatedPerSecond = 5
	FlakyService   = "flaky"
	FlakyTrip      = 3
	FlakyOpen      = 3 * time.Second
)

// Services are the declared services of the service tests' workers.
func Services() []service.Def {
	return []service.Def{
		service.Declare(RatedService, service.Options{RatePerSecond: RatedPerSecond, MaxConcurrent: 10}),
		service.Declare(FlakyService, service.Options{Breaker: &service.BreakerOptions{
			ConsecutiveFailures: FlakyTrip, OpenTimeout: FlakyOpen}}),
	}
}

// ServiceFlows are the flows of the service tests.
func ServiceFlows() []flow.Definition { return []flow.Definition{RatedCalls, FlakyCall} }

// RatedInput is where RatedCalls sends its N calls.
type RatedInput struct {
	URL string `json:"url"`
	N   int    `json:"n"`
}

// RatedCalls makes N GET calls to URL at once, all through RatedService.
var RatedCalls = flow.Define("test.services.rated", func(ctx *flow.Context, in RatedInput) (int, error) {
	steps := make([]flow.ParallelStep, in.N)
	for i := range steps {
		steps[i] = flow.HTTPStep(fmt.Sprintf("call-%02d", i), activities.HTTP{URL: fmt.Sprintf("%s?i=%d", in.URL, i)},
			flow.UseService(RatedService))
	}
	res, err := ctx.Parallel("calls", flow.FailFast, steps...)
	return len(res), err
})

// FlakyCall makes one GET call to its URL through FlakyService, with attempts enough to
// outlast the breaker's open time, and returns the body.
var FlakyCall = flow.Define("test.services.flaky", func(ctx *flow.Context, url string) (string, error) {
	res, err := ctx.HTTP("call", activities.HTTP{URL: url}, flow.UseService(FlakyService),
		flow.Retry(temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 10}))
	return res.Body, err
})
