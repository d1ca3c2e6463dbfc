package core

import "time"

// ServiceBreakerState is a service's circuit breaker state on one worker.
type ServiceBreakerState struct {
	// Service is the service's name.
	Service string `json:"service"`
	// State is "closed", "half-open" or "open"; empty when the service has no breaker.
	State string `json:"state,omitempty"`
	// OpenUntil is when an open breaker lets probes through.
	OpenUntil *time.Time `json:"open_until,omitempty"`
	// ConsecutiveFailures, Requests and Failures are the breaker's counts in its current
	// interval (or, while half-open, of the probes).
	ConsecutiveFailures uint32 `json:"consecutive_failures"`
	Requests            uint32 `json:"requests"`
	Failures            uint32 `json:"failures"`
	// UpdatedAt is when the worker reported it.
	UpdatedAt time.Time `json:"updated_at"`
}

// ServiceStatus is a declared service as one worker reported it (flowclient.Client.Services).
type ServiceStatus struct {
	ServiceBreakerState
	// Worker is the reporting worker's identity.
	Worker string `json:"worker"`
	// RatePerSecond and MaxConcurrent are the worker's limits of the service.
	RatePerSecond float64 `json:"rate_per_second,omitempty"`
	MaxConcurrent int     `json:"max_concurrent,omitempty"`
}
