package activities

// ActionCall is what a fallback action (flow.Worker.RegisterFallbackAction) is called with: the name a declarative
// definition's step `uses:` and its `with:` parameters, after their expressions were
// evaluated.
type ActionCall struct {
	// Name is the action name the step asked for.
	Name string `json:"name"`
	// With are the step's parameters.
	With map[string]any `json:"with,omitempty"`
}
