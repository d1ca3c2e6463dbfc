package flow

import (
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/temporal"
)

// StepOption adjusts one step.
type StepOption func(*stepOptions)

type stepOptions struct {
	timeout          time.Duration
	heartbeatTimeout time.Duration
	retry            *temporal.RetryPolicy
	allowFailure     bool
	costLimit        *decimal.Decimal
	// queueTimeout, onFailure and onTimeout: QueueTimeout, OnFailure, OnTimeout (routing.go).
	queueTimeout time.Duration
	onFailure    *routeSpec
	onTimeout    *routeSpec
	// detached and childTags are for Child steps (Detached, ChildTags).
	detached     bool
	childTags    []string
	childTagsSet bool
	// service is the step's service (UseService, service.go).
	service string
	// cache is the step's Cache or SharedCache (cache.go).
	cache *cacheSpec
}

// StepTimeout bounds one attempt of the step (the activity's StartToCloseTimeout).
func StepTimeout(d time.Duration) StepOption { return func(o *stepOptions) { o.timeout = d } }

// HeartbeatTimeout is how long a step may go without a heartbeat before Temporal
// considers its worker gone and retries it elsewhere.
func HeartbeatTimeout(d time.Duration) StepOption {
	return func(o *stepOptions) { o.heartbeatTimeout = d }
}

// Retry sets the step's retry policy (attempts, backoff, non-retryable error types).
// Without it a step is tried up to three times for infrastructure failures (a lost worker,
// a timeout, a provider's rate limit), and a command's own failure, such as a non-zero exit
// or a 4xx answer, is not retried.
func Retry(p temporal.RetryPolicy) StepOption {
	return func(o *stepOptions) { o.retry = &p }
}

// AllowFailure lets the step fail without failing the run: the step is recorded as failed
// (allowed), the handler gets the zero result and an *AllowedFailure wrapping the step's
// error, and a run that otherwise completes ends with status warning. A handler may return
// that error: a run whose handler returns only allowed failures ends warning, not failed.
func AllowFailure() StepOption { return func(o *stepOptions) { o.allowFailure = true } }

// CostLimit declares what the step may cost at most: the step reserves it against the
// run's cap before it is dispatched (a step that would take spend over the cap is not
// dispatched), and a child run gets it as its cap when it is less than what is left.
// Agent steps reserve their MaxBudgetUSD without it.
func CostLimit(usd decimal.Decimal) StepOption {
	return func(o *stepOptions) { o.costLimit = &usd }
}

// Detached makes a Child step's run outlive its parent: cancelling the parent, or the
// parent ending, does not cancel it (Temporal's parent close policy ABANDON). While the
// parent waits for it, it reports to the parent as any child does; a cancelled parent
// records the step as cancelled and the child goes on. To start a child and not wait for
// it, run the Child step in a branch (Async) that the handler never waits for. Other steps
// ignore it.
func Detached() StepOption { return func(o *stepOptions) { o.detached = true } }

// ChildTags sends a Child step's run to the workers that have all of tags (see
// WorkerOptions.Tags and core.StartOptions.WorkerTags) instead of its parent's queue; with no
// tags, to any worker of the task queue. Tags are checked as start tags are: a bad tag, or
// more than a worker can have, fails the step. Other steps ignore it.
func ChildTags(tags ...string) StepOption {
	return func(o *stepOptions) { o.childTags, o.childTagsSet = append([]string(nil), tags...), true }
}

// Defaults and limits.
const (
	// DefaultStepTimeout bounds one attempt of a step without StepTimeout.
	DefaultStepTimeout = time.Hour
	// DefaultHeartbeatTimeout is a step's heartbeat timeout without HeartbeatTimeout.
	DefaultHeartbeatTimeout = 30 * time.Second
	// DefaultStepAttempts is how often a step without Retry is tried for infrastructure
	// failures.
	DefaultStepAttempts = 3
	// DefaultBudgetPause is how long a run with the pause policy waits for a higher cap.
	DefaultBudgetPause = 24 * time.Hour
	// DefaultMaxVisits is how often ctx.Label runs its body without MaxVisits (the first
	// visit included); MaxLabelVisits is the most MaxVisits may allow, and MaxRunReentries
	// the most re-entries of labels one run may make in all.
	DefaultMaxVisits = 3
	MaxLabelVisits   = 100
	MaxRunReentries  = 1000
)
