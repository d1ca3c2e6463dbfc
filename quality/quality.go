package quality

// OnFail says what a quality gate does with a score below its threshold.
type OnFail string

// What a quality gate does with a score below its threshold.
const (
	// Fail (the default, also the zero value "") fails the gate's step: QualityGate
	// returns a *flow.StepError around an application error of type
	// flow.ErrorQualityGate.
	Fail OnFail = "fail"
	// Continue records the step as failed and allowed (runs.Step.AllowedFailure), as a
	// step with flow.AllowFailure is: QualityGate returns a *flow.AllowedFailure, the
	// handler goes on, and a run whose handler returns only allowed failures ends warning.
	Continue OnFail = "continue"
)

// Gate is a quality gate's settings (flow.Context.QualityGate).
type Gate struct {
	// Threshold is the least score that passes, from 0 to 100: a score equal to the
	// threshold passes.
	Threshold float64 `json:"threshold"`
	// Field is the dotted path of the score in the source: "score", "review.score",
	// "reviews.0.score" (a number segment indexes an array). Keys match exactly, else
	// ignoring case, as encoding/json matches struct fields. Empty reads the source itself
	// when it is a number, else its "score" field.
	Field string `json:"field,omitempty"`
	// OnFail is what a score below the threshold does: Fail (default) or Continue.
	OnFail OnFail `json:"on_fail,omitempty"`
}
