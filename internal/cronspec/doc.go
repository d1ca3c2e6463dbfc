// Package cronspec owns the check of the cron expressions of flow schedules
// (flow.Schedule, the schedules of a definition): robfig/cron's standard parser, guarded
// against the inputs it panics on, so a bad expression is an error, never a crash.
package cronspec
