// Package entity holds gateflow's entity workflows: long-lived workflows nobody starts by
// hand, one per task queue (catalog, control), per concurrency group (semaphore), per
// signal name and key (mailbox) and per budget scope and month (ledger). Workers register
// them with RegisterWorkflows and RegisterActivities; runs reach them through activities,
// clients through the helpers here (signal-with-start, and memo reads that need no worker).
//
// Each entity keeps its rules in a pure state type (CatalogState, ControlState,
// SemaphoreState; the ledger and mailbox use budget.Quota and signals.Mailbox) that is
// table-tested without Temporal; the workflow functions only move messages in and out.
// Names and payloads on the wire are in internal/protocol.
package entity
