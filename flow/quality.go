package flow

// QualityRecord is what a run keeps about a quality gate (ctx.QualityGate).
type QualityRecord struct {
	// Score is the score read from the output (0–100); Threshold the least that passes.
	Score     float64 `json:"score"`
	Threshold float64 `json:"threshold"`
}
