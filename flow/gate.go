package flow

// GateRecord is what a run keeps about a polled gate (ctx.Gate).
type GateRecord struct {
	// Type is the gate resolver's type ("http", "command", ...).
	Type string `json:"type"`
}
