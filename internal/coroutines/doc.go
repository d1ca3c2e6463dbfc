// Package coroutines counts the Temporal Go SDK's workflow coroutines in this process,
// for tests that check how many a run holds (each is a goroutine the SDK's dispatcher
// starts: a run's function and each workflow.Go).
package coroutines
