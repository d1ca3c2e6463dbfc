package flow

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
)

// addTokens is the sum of two token counts.
func addTokens(t, o runs.Tokens) runs.Tokens {
	return runs.Tokens{Input: t.Input + o.Input, Output: t.Output + o.Output}
}

// beginStep appends a running step in the branch scope ("" outside branches) and returns
// its index. Its activity ID is its name (prefixed by the scope inside a branch); a name
// used before in the same scope gets a #N suffix, so every activity of the run has its own
// ID.
func beginStep(s *runs.State, scope, name string, kind runs.StepKind, now time.Time) int {
	uses := 0
	for _, st := range s.Steps {
		if st.Name == name && st.Branch == scope {
			uses++
		}
	}
	id := name
	if scope != "" {
		id = scope + "/" + name
	}
	if uses > 0 {
		id = fmt.Sprintf("%s#%d", id, uses+1)
	}
	s.Steps = append(s.Steps, runs.Step{
		Name: name, ActivityID: id, Kind: kind, Status: runs.StepRunning, Attempt: 1, StartedAt: now,
		RunAttempt: max(s.Attempt, 1), Branch: scope,
	})
	return len(s.Steps) - 1
}

// endStep records a step's outcome.
func endStep(s *runs.State, i int, now time.Time, status runs.StepStatus, attempt int, errMsg, output string, exitCode *int) {
	st := &s.Steps[i]
	st.Status = status
	st.EndedAt = &now
	st.DurationMS = now.Sub(st.StartedAt).Milliseconds()
	if attempt > 0 {
		st.Attempt = attempt
	}
	st.Error = errMsg
	st.Output = output
	st.ExitCode = exitCode
}

// chargeStep adds a step's cost and tokens to the step and to the run.
func chargeStep(s *runs.State, i int, cost decimal.Decimal, tokens runs.Tokens) {
	if cost.IsZero() && tokens.Total() == 0 {
		return // most steps cost nothing: the sums stay as they are, with no new decimals
	}
	st := &s.Steps[i]
	st.CostUSD = st.CostUSD.Add(cost)
	if tokens.Total() > 0 {
		t := tokens
		if st.Tokens != nil {
			t = addTokens(*st.Tokens, tokens)
		}
		st.Tokens = &t
	}
	s.CostUSD = s.CostUSD.Add(cost)
	s.Tokens = addTokens(s.Tokens, tokens)
}

// finishRun records the run's end.
func finishRun(s *runs.State, now time.Time, status runs.Status, errMsg string) {
	s.Status = status
	s.EndedAt = &now
	s.Error = errMsg
}

// cloneState is a copy of s whose step, refusal, problem and label lists are its own, so a
// later change to the run does not show through it.
func cloneState(s *runs.State) runs.State {
	c := *s
	c.Steps = append([]runs.Step(nil), s.Steps...)
	c.Refused = append([]runs.RefusedMessage(nil), s.Refused...)
	c.Problems = append([]string(nil), s.Problems...)
	c.Labels = append([]runs.Label(nil), s.Labels...)
	return c
}

// statusWhile is the status a run recorded before waitStatusChange (run_status.go) took
// when one of its waits ended, given what it still waited for: approvals first, then
// inputs, then polled gates, then signals, then provider capacity; running when it waited
// for none of those (budget, pause and sleep were left out). Newer runs take
// openWaits.status (run_waits.go).
func statusWhile(waits []runs.Wait) runs.Status {
	next := runs.StatusRunning
	for _, w := range waits {
		switch {
		case w.Kind == runs.ForApproval:
			next = runs.StatusAwaitingApproval
		case w.Kind == runs.ForInput && next != runs.StatusAwaitingApproval:
			next = runs.StatusAwaitingInput
		case w.Kind == runs.ForGate && (next == runs.StatusRunning || next == runs.StatusWaitingSignal || next == runs.StatusWaitingCapacity):
			next = runs.StatusAwaitingGate
		case w.Kind == runs.ForSignal && (next == runs.StatusRunning || next == runs.StatusWaitingCapacity):
			next = runs.StatusWaitingSignal
		case w.Kind == runs.ForCapacity && next == runs.StatusRunning:
			next = runs.StatusWaitingCapacity
		}
	}
	return next
}
