// Package startplan plans starts and reads the catalog they are planned against, for
// both sides of gateflow: the client (flowclient.Client.Start, Plan, SignalStart,
// RestartOnce) and the worker's own starts (once starts, triggered runs), so a run is
// started the same way whoever starts it. New checks a start against the flow's catalog
// entry (core.WorkflowInfo) in the documented order and plans it (Plan) without talking
// to the server; ReadCatalog reads a task queue's catalog (core.Catalog). It also owns the
// names and keys a start computes: flow names (ValidateName), run IDs (NewRunID) and the
// MaxRuns concurrency groups (MaxRunsGroup, StartGroup).
package startplan
