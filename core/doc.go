// Package core is the small floor both sides of gateflow speak: the run wrapper (package
// flow, which serves flows on workers) and the client (package flowclient, which starts
// and steers runs). It owns the one definition of what they exchange through a task
// queue's catalog and a start:
//
//   - a flow's catalog entry (WorkflowInfo) with its start vocabulary: once starts
//     (OnceInfo), triggers (TriggerInfo, RunEnd, WhenCompleted, WhenFailed) and the
//     overflow of MaxRuns (Overflow, OverflowQueue, OverflowRefuse, OverflowReplace);
//   - the catalog (Catalog) and the registries a worker publishes in it (RegistryInfo,
//     BuiltinActions, BuiltinGateResolvers);
//   - the options of one start (StartOptions) and their bounds (DefaultTaskQueue,
//     MinPriority, MaxPriority, DefaultPriority, MaxLabels, MaxRunAttempts);
//   - the errors a start or a decision returns on both sides (InputError,
//     UnknownWorkflowError, ErrNoCatalog, ErrNotValidated);
//   - the services' state the workers publish (ServiceStatus, ServiceBreakerState).
//
// It holds data, its documentation and a few accessors (Catalog.Lookup, Names,
// Registry), not behaviour: starts are planned by both sides through an internal
// package. It imports neither flow nor flowclient, so a client program does not link the
// run wrapper, nor any Temporal package of its own (only schedule.Info, the type of
// WorkflowInfo.Schedules, brings Temporal's API enums).
package core
