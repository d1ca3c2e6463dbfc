// Package service declares the services a worker's steps call (an API, a provider), for
// flow.WorkerOptions.Services: limits that hold across all the workers of a task queue and
// a circuit breaker per worker protect them.
//
// A service is declared on the worker (flow.WorkerOptions.Services). Its steps go to their own
// activity task queue, "<task queue>/svc/<name>", which every worker that
// declares the service polls with Temporal's TaskQueueActivitiesPerSecond (RatePerSecond:
// the Temporal server enforces it for all the pollers of the queue together) and
// MaxConcurrentActivityExecutionSize (MaxConcurrent: per worker). The workers of a task
// queue should declare the same services with the same limits; the server keeps the rate
// the latest poller asked for.
//
// A step uses a service when it names it (flow.UseService), or, when it names none, when a
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
// retryable flow.ErrorServiceUnavailable error whose next retry is scheduled by Temporal
// (NextRetryDelay) after the open time; meanwhile the step shows waiting_service
// (runs.StepWaitingService) in flowclient.Client.Describe, flowctl show and watch. After the open time a
// few probes (HalfOpenProbes) go through; their success closes the breaker, a failure
// opens it again. Fast failures use attempts of the step's retry policy (three by
// default): give steps of a service with a breaker attempts enough to outlast it.
//
// Each worker exports gateflow_service_breaker_state{service} (0 closed, 1 half-open, 2
// open; updated as the service's steps run) and gateflow_service_fast_failures_total
// through its client's metrics handler, and reports its breakers' state to the services
// entity of the task queue ("gateflow-catalog-<queue>/services"), which
// flowclient.Client.Services and `flowctl services` read.
//
// Limits: a service's steps go to any worker that declares the service, whatever tags a
// run needs (core.StartOptions.WorkerTags). Runs replay with the services of the worker that
// replays them: a worker (or a replayer, flow.RegisterWorkflows) without a service that a
// recorded step named fails that step again, which Temporal reports as nondeterminism.
//
//	w := flow.NewWorker(tc, flow.WorkerOptions{Services: []service.Def{
//		service.Declare("api.github.com", service.Options{RatePerSecond: 5,
//			Breaker: &service.BreakerOptions{ConsecutiveFailures: 3}}),
//	}}, flows...)
package service
