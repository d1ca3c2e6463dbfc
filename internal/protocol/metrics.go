package protocol

// Metric instruments gateflow records through the Temporal SDK's metrics handler
// (workflow.GetMetricsHandler and activity.GetMetricsHandler, so replays do not count
// twice). They are not in histories, but dashboards and alerts name them: add names, never
// rename one. internal/telemetry maps them to OpenTelemetry instruments and lists the names
// they get on /metrics (telemetry.Exported).
const (
	// MetricRuns counts runs that ended, by workflow and status.
	MetricRuns = "gateflow_runs_total"
	// MetricRunsStarted counts runs that started, by workflow.
	MetricRunsStarted = "gateflow_runs_started_total"
	// MetricActiveRuns is the number of runs started and not yet ended, by workflow: an
	// up-down counter (+1 at the start, -1 at the end).
	MetricActiveRuns = "gateflow_active_runs"
	// MetricRunDuration is a run's duration from its start to its end, by workflow and
	// status (a timer: a histogram in seconds).
	MetricRunDuration = "gateflow_run_duration"
	// MetricRunCost counts the runs' cost in micro-USD, by workflow.
	MetricRunCost = "gateflow_run_cost_usd_micros_total"
	// MetricBudgetExceeded counts runs stopped by their budget, by workflow.
	MetricBudgetExceeded = "gateflow_budget_exceeded_total"
	// MetricStepDuration is a step's duration, by workflow, kind and status (a timer).
	MetricStepDuration = "gateflow_step_duration"
	// MetricGatesOpened counts approval gates that opened, by workflow.
	MetricGatesOpened = "gateflow_gates_opened_total"
	// MetricGatesDecided counts approval gates that closed, by workflow and outcome.
	MetricGatesDecided = "gateflow_gates_decided_total"
	// MetricPendingGates is the number of approval gates open now, by workflow (an
	// up-down counter).
	MetricPendingGates = "gateflow_pending_gates"
	// MetricApprovalWait is how long an approval gate was open, by workflow and outcome
	// (a timer).
	MetricApprovalWait = "gateflow_approval_wait"
	// MetricBreakerState is a service's circuit breaker: 0 closed, 1 half-open, 2 open, by
	// service (a gauge).
	MetricBreakerState = "gateflow_service_breaker_state"
	// MetricFastFailures counts step attempts failed fast by an open breaker, by service.
	MetricFastFailures = "gateflow_service_fast_failures_total"
	// MetricEventDeliveryFailures counts run events an event sink did not take after its
	// retries, by workflow, type and sink.
	MetricEventDeliveryFailures = "gateflow_event_delivery_failures_total"
)

// UpDownMetrics are the counters that go down as well as up (Inc with a negative value).
var UpDownMetrics = []string{MetricActiveRuns, MetricPendingGates}
