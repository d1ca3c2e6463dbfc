package flow

import (
	"time"

	"go.temporal.io/sdk/workflow"
)

// runNow is the run's clock to the millisecond. Every time the wrapper records (the run's
// start, its steps' starts and ends, votes, answers, signals, events) and every deadline
// it computes comes from it, so the times in a run's state are written with millisecond
// precision (a shorter Memo and Query answer: "…T09:00:01.5Z", not nanoseconds) and stay
// ordered among themselves. workflow.Now has the precision of the server's event times.
// Truncating is deterministic: a replay gets the times the run recorded.
func runNow(ctx workflow.Context) time.Time { return workflow.Now(ctx).Truncate(time.Millisecond) }
