package flow

// DecisionRecord is what a run keeps about a decision (Decide).
type DecisionRecord struct {
	// Options are the choices offered; Choice the one picked.
	Options []string `json:"options"`
	Choice  string   `json:"choice,omitempty"`
}
