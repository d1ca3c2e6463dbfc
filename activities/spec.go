package activities

import "github.com/shopspring/decimal"

// Spec is a built-in step's input: it names the activity that runs it and checks itself
// before it is dispatched. Shell, HTTP and Agent are Specs; flow.Context.OnError and the
// parallel step constructors take them.
type Spec interface {
	// ActivityName is the Temporal activity name of the step.
	ActivityName() string
	// Validate reports what is wrong with the step, before anything runs.
	Validate() error
}

// ActivityName is ShellActivity.
func (Shell) ActivityName() string { return ShellActivity }

// ActivityName is HTTPActivity.
func (HTTP) ActivityName() string { return HTTPActivity }

// ActivityName is AgentActivity.
func (Agent) ActivityName() string { return AgentActivity }

var (
	_ Spec = Shell{}
	_ Spec = HTTP{}
	_ Spec = Agent{}
)

// CostReporter is implemented by the results of custom activities that know what the step
// cost (flow.Step and flow.ActivityStep charge it to the run's budget and the monthly
// ledgers).
type CostReporter interface {
	StepCostUSD() decimal.Decimal
}

// TokenReporter is implemented by the results of custom activities that used agent
// tokens; flow counts them against the run's token guard.
type TokenReporter interface {
	StepTokens() (input, output int64)
}
