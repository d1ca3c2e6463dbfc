package flow

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/protocol"
)

// ServiceOptions are a service's limits.
type ServiceOptions struct {
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

// ServiceDef is a declared service: see Service.
type ServiceDef struct {
	// Name is the service's name, what steps name (UseService).
	Name string
	// Options are its limits.
	Options ServiceOptions
}

// Service declares a service for WorkerOptions.Services. Services protect what steps call (an API, a provider) with limits that hold across all
// the workers of a task queue and with a circuit breaker per worker.
//
// A service is declared on the worker (WorkerOptions.Services). Its steps go to their own
// activity task queue, "<task queue>/svc/<name>", which every worker that
// declares the service polls with Temporal's TaskQueueActivitiesPerSecond (RatePerSecond:
// the Temporal server enforces it for all the pollers of the queue together) and
// MaxConcurrentActivityExecutionSize (MaxConcurrent: per worker). The workers of a task
// queue should declare the same services with the same limits; the server keeps the rate
// the latest poller asked for.
//
// A step uses a service when it names it (UseService), or, when it names none, when a
// declared service has the name of
//   - an HTTP step's URL host, with or without the port ("api.github.com", "127.0.0.1:8080"),
//   - an agent step's provider (its Provider field, or the provider its model's prefix
//     picks, e.g. "openai").
//
// A step naming a service its worker does not declare fails without being dispatched.
//
// With a Breaker, each worker counts the outcomes of the service's steps it runs: a failure
// is any error but a cancellation or a non-retryable one (such as an HTTP 4xx answer,
// which is the request's fault, not the service's). When the breaker trips it is open
// for OpenTimeout: the service's steps fail at once without calling the service, with a
// retryable ErrorServiceUnavailable error whose next retry is scheduled by Temporal
// (NextRetryDelay) after the open time; meanwhile the step shows waiting_service
// (StepWaitingService) in Client.Describe, flowctl show and watch. After the open time a
// few probes (HalfOpenProbes) go through; their success closes the breaker, a failure
// opens it again. Fast failures use attempts of the step's retry policy (three by
// default): give steps of a service with a breaker attempts enough to outlast it.
//
// Each worker exports gateflow_service_breaker_state{service} (0 closed, 1 half-open, 2
// open; updated as the service's steps run) and gateflow_service_fast_failures_total
// through its client's metrics handler, and reports its breakers' state to the services
// entity of the task queue ("gateflow-catalog-<queue>/services"), which Client.Services and `flowctl services`
// read.
//
// Limits: a service's steps go to any worker that declares the service, whatever tags a
// run needs (StartOptions.WorkerTags). Runs replay with the services of the worker that
// replays them: a worker (or a replayer, RegisterWorkflows) without a service that a
// recorded step named fails that step again, which Temporal reports as nondeterminism.
func Service(name string, opts ServiceOptions) ServiceDef {
	return ServiceDef{Name: name, Options: opts}
}

// UseService sends the step to the service name (declared in WorkerOptions.Services): its
// rate limit, concurrency limit and breaker apply to the step.
func UseService(name string) StepOption {
	return func(o *stepOptions) { o.service = name }
}

var serviceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

// maxServiceName bounds a service's name (it is part of a task queue name).
const maxServiceName = 200

// checkServices reports every mistake in declared services.
func checkServices(defs []ServiceDef) error {
	var errs []error
	seen := map[string]bool{}
	for i, d := range defs {
		where := fmt.Sprintf("service %d (%q)", i, d.Name)
		switch {
		case d.Name == "":
			errs = append(errs, fmt.Errorf("service %d: the name is empty", i))
		case len(d.Name) > maxServiceName || !serviceName.MatchString(d.Name):
			errs = append(errs, fmt.Errorf("%s: a name is letters, digits, '.', '_', ':' and '-' (at most %d), starting with a letter or digit", where, maxServiceName))
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("%s is declared twice", where))
		}
		seen[d.Name] = true
		o := d.Options
		if o.RatePerSecond < 0 || math.IsNaN(o.RatePerSecond) || math.IsInf(o.RatePerSecond, 0) {
			errs = append(errs, fmt.Errorf("%s: RatePerSecond %v is not a rate (>= 0)", where, o.RatePerSecond))
		}
		if o.MaxConcurrent < 0 {
			errs = append(errs, fmt.Errorf("%s: MaxConcurrent %d is negative", where, o.MaxConcurrent))
		}
		if b := o.Breaker; b != nil {
			if b.FailureRatio < 0 || b.FailureRatio > 1 || math.IsNaN(b.FailureRatio) {
				errs = append(errs, fmt.Errorf("%s: Breaker.FailureRatio %v is not in 0..1", where, b.FailureRatio))
			}
			if b.Interval < 0 || b.OpenTimeout < 0 {
				errs = append(errs, fmt.Errorf("%s: Breaker.Interval and OpenTimeout must not be negative", where))
			}
		}
	}
	return errors.Join(errs...)
}

// serviceNames are the names of the declared services, sorted.
func serviceNames(defs []ServiceDef) []string {
	names := make([]string, 0, len(defs))
	for _, d := range defs {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

// stepService is the service a step uses ("" for none), by the rule of Services; a named
// service the worker does not declare is an error.
func (rt *runner) stepService(cl call) (string, error) {
	if name := cl.opts.service; name != "" {
		if !slices.Contains(rt.services, name) {
			known := "none"
			if len(rt.services) > 0 {
				known = strings.Join(rt.services, ", ")
			}
			return "", fmt.Errorf("step %s: service %q is not declared on this worker (WorkerOptions.Services: %s)", cl.name, name, known)
		}
		return name, nil
	}
	if len(rt.services) == 0 || len(cl.args) == 0 {
		return "", nil
	}
	var candidates []string
	switch s := cl.args[0].(type) {
	case activities.HTTP:
		if u, err := url.Parse(s.URL); err == nil {
			candidates = []string{u.Host, u.Hostname()}
		}
	case activities.Agent:
		p := s.Provider
		if p == "" {
			p = llm.ProviderForModel(s.Model)
		}
		candidates = []string{p}
	}
	for _, n := range candidates {
		if n != "" && slices.Contains(rt.services, n) {
			return n, nil
		}
	}
	return "", nil
}

// checkService is the error of a step naming an undeclared service (run_steps.go).
func (c *Context) checkService(cl call) error {
	_, err := c.run.stepService(cl)
	return err
}

// serviceQueue is the task queue of the step's activity: its service's, or "" (the run's).
func (c *Context) serviceQueue(cl call) string {
	name, err := c.run.stepService(cl)
	if err != nil || name == "" {
		return ""
	}
	return protocol.ServiceQueue(c.run.baseQueue, name)
}
