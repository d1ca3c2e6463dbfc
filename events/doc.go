// Package events delivers what happens in gateflow runs to the systems that want to know:
// status changes, steps (and their retries), approvals, inputs, signals and budget
// warnings, as Events with a stable ID. A worker's sinks (WorkerOptions.EventSinks in
// package flow) receive them. Webhook POSTs each event as JSON; Log writes it to a logger;
// any type with a Deliver method is a Sink. Subscribe narrows a sink to chosen event types
// and workflows: the worker filters before delivery, and a run no sink wants an event of
// schedules no delivery at all.
//
// Delivery: the events a run emits within one workflow task go to the sinks together, in
// order, in one local activity (a marker in the run's history, no activity events); each
// sink gets them on its own, so a failing or slow sink does not stop the others. A failed
// delivery is retried for that sink only (3 attempts, each bounded by 5s), then logged
// and counted in gateflow_event_delivery_failures_total (by workflow, type and sink); it
// never fails the run. A replay never delivers again; a worker lost in the middle of a
// delivery can deliver again, with the same IDs (Webhook sends the ID as
// Idempotency-Key).
package events
