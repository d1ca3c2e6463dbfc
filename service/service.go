package service

import "time"

// Options are a service's limits.
type Options struct {
	// RatePerSecond is how many of the service's steps may start per second, across all
	// the workers of the task queue (enforced by the Temporal server). 0: no limit.
	RatePerSecond float64
	// MaxConcurrent is how many of the service's steps one worker runs at once. 0: the
	// SDK's default.
	MaxConcurrent int
	// Breaker is the circuit breaker of the service on each worker; nil: none.
	Breaker *BreakerOptions
}

// BreakerOptions configure a service's circuit breaker (github.com/sony/gobreaker/v2).
// It trips after ConsecutiveFailures failures in a row, or, with FailureRatio set, when at
// least MinRequests steps ran in the current interval and the share of them that failed
// reaches FailureRatio.
type BreakerOptions struct {
	// ConsecutiveFailures trips the breaker after that many failures in a row. Default 5
	// (when FailureRatio is 0).
	ConsecutiveFailures uint32
	// FailureRatio (0 < r <= 1) trips the breaker when that share of the interval's steps
	// failed, once MinRequests ran.
	FailureRatio float64
	// MinRequests is how many steps an interval needs before FailureRatio applies.
	// Default 10.
	MinRequests uint32
	// Interval is how often the closed breaker forgets its counts. 0: never (only a
	// success resets the consecutive failures).
	Interval time.Duration
	// OpenTimeout is how long the breaker stays open before it lets probes through.
	// Default 30s.
	OpenTimeout time.Duration
	// HalfOpenProbes is how many steps may probe the service while the breaker is
	// half-open; their successes close it. Default 1.
	HalfOpenProbes uint32
}

// Def is a declared service: see Declare.
type Def struct {
	// Name is the service's name, what steps name (flow.UseService).
	Name string
	// Options are its limits.
	Options Options
}

// Declare declares the service name with its limits, for flow.WorkerOptions.Services.
// The name is what steps name (flow.UseService) and may be an HTTP host or an agent
// provider (see the package documentation); flow.NewWorker checks names and limits.
func Declare(name string, opts Options) Def {
	return Def{Name: name, Options: opts}
}
