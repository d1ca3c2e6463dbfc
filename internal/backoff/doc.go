// Package backoff computes retry delays the way Temporal's retry policies do, with a
// deterministic jitter: the same run, step and attempt always get the same delay, so a
// workflow that sleeps for it replays, and different runs retrying the same step do not
// retry in lockstep.
//
// It is pure: no Temporal calls, no clock, no randomness beyond an FNV hash of the seed.
package backoff
