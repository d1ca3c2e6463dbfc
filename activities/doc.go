// Package activities holds gateflow's built-in step activities and their input and result
// types: Shell runs a command in a real process.
//
// Each built-in step is a plain Temporal activity. Workflow code reaches them through
// flow.Context (ctx.Shell); a worker created with flow.NewWorker registers them. They can
// also be registered and called like any other activity, under the names in this package
// (ShellActivity).
//
// Long steps heartbeat, so a crashed worker is noticed within the step's heartbeat timeout
// and the step is retried elsewhere; a cancelled step kills its whole process group.
package activities
