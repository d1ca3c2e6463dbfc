package flow

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/runs"
)

// Guards are execution limits on a run and the tree of child runs below it: the most child
// depth, fan-out, agent tokens, wall time and steps (the fields and their defaults are
// runs.Guards'). A zero field means the default (see DefaultGuards); a negative one means
// no limit. A run's state keeps the limits in force (runs.State.Guards).
type Guards runs.Guards

// DefaultGuards are the limits a run gets when neither the flow nor the worker sets them.
var DefaultGuards = Guards{MaxChildDepth: 5, MaxFanOut: 50, MaxTokens: -1, MaxWallTime: -1, MaxSteps: 10_000}

// resolve fills zero fields from fallback, then from DefaultGuards.
func (g Guards) resolve(fallback Guards) Guards {
	pick := func(v, f, d int64) int64 {
		switch {
		case v != 0:
			return v
		case f != 0:
			return f
		}
		return d
	}
	return Guards{
		MaxChildDepth: int(pick(int64(g.MaxChildDepth), int64(fallback.MaxChildDepth), int64(DefaultGuards.MaxChildDepth))),
		MaxFanOut:     int(pick(int64(g.MaxFanOut), int64(fallback.MaxFanOut), int64(DefaultGuards.MaxFanOut))),
		MaxTokens:     pick(g.MaxTokens, fallback.MaxTokens, DefaultGuards.MaxTokens),
		MaxWallTime:   time.Duration(pick(int64(g.MaxWallTime), int64(fallback.MaxWallTime), int64(DefaultGuards.MaxWallTime))),
		MaxSteps:      int(pick(int64(g.MaxSteps), int64(fallback.MaxSteps), int64(DefaultGuards.MaxSteps))),
	}
}

// tighten is g with each limit of t that is set (positive) and stricter than g's: a
// start's guards (core.StartOptions.Guards). A limit g does not have (-1) takes t's.
func (g Guards) tighten(t protocol.GuardLimits) Guards {
	pick := func(v, l int64) int64 {
		if l > 0 && (v < 0 || v == 0 || l < v) {
			return l
		}
		return v
	}
	return Guards{
		MaxChildDepth: int(pick(int64(g.MaxChildDepth), int64(t.MaxChildDepth))),
		MaxFanOut:     int(pick(int64(g.MaxFanOut), int64(t.MaxFanOut))),
		MaxTokens:     pick(g.MaxTokens, t.MaxTokens),
		MaxWallTime:   time.Duration(pick(int64(g.MaxWallTime), int64(t.MaxWallTime))),
		MaxSteps:      int(pick(int64(g.MaxSteps), int64(t.MaxSteps))),
	}
}

// GuardError says which limit a run reached.
type GuardError struct {
	// Limit is "child depth", "fan-out", "tokens", "wall time" or "steps".
	Limit string
	// Value is what the run would reach, Max the limit, both as text with units.
	Value, Max string
	// Step is the step that was refused or that crossed the limit.
	Step string
}

// Error implements error.
func (e *GuardError) Error() string {
	return fmt.Sprintf("guard: %s %s exceeds the limit of %s at step %s", e.Limit, e.Value, e.Max, e.Step)
}

// Is makes errors.Is(err, errGuard) true.
func (e *GuardError) Is(target error) bool { return target == errGuard }

// checkDepth refuses a child that would nest deeper than allowed.
func (g Guards) checkDepth(step string, childDepth int) error {
	if g.MaxChildDepth >= 0 && childDepth > g.MaxChildDepth {
		return &GuardError{Limit: "child depth", Value: fmt.Sprint(childDepth), Max: fmt.Sprint(g.MaxChildDepth), Step: step}
	}
	return nil
}

// checkFanOut refuses n concurrent steps or n child runs in one run.
func (g Guards) checkFanOut(step string, n int) error {
	if g.MaxFanOut >= 0 && n > g.MaxFanOut {
		return &GuardError{Limit: "fan-out", Value: fmt.Sprint(n), Max: fmt.Sprint(g.MaxFanOut), Step: step}
	}
	return nil
}

// checkTokens refuses a total above the token limit.
func (g Guards) checkTokens(step string, total int64) error {
	if g.MaxTokens >= 0 && total > g.MaxTokens {
		return &GuardError{Limit: "tokens", Value: fmt.Sprint(total), Max: fmt.Sprint(g.MaxTokens), Step: step}
	}
	return nil
}

// checkSteps refuses the step that would be the run's nth.
func (g Guards) checkSteps(step string, n int) error {
	if g.MaxSteps >= 0 && n > g.MaxSteps {
		return &GuardError{Limit: "steps", Value: fmt.Sprint(n), Max: fmt.Sprint(g.MaxSteps), Step: step}
	}
	return nil
}

// remaining is the wall time left at now for a run that started at start; ok is false
// when none is left. Without a wall-time limit it returns (0, true).
func (g Guards) remaining(start, now time.Time) (time.Duration, bool) {
	if g.MaxWallTime < 0 {
		return 0, true
	}
	left := g.MaxWallTime - now.Sub(start)
	return left, left > 0
}

// checkWallTime refuses a step when the run's wall time is used up.
func (g Guards) checkWallTime(step string, start, now time.Time) error {
	if _, ok := g.remaining(start, now); !ok {
		return &GuardError{Limit: "wall time", Value: now.Sub(start).Round(time.Millisecond).String(),
			Max: g.MaxWallTime.String(), Step: step}
	}
	return nil
}

// attemptTimeout is the timeout of the next attempt of a step the run retries itself (a
// cost-bearing step): the step's timeout, cut to the run's wall time left when that is
// shorter. ok is false when the run has a wall-time limit and none of it is left: no new
// attempt may start. A timeout of 0 (none set) becomes the wall time left.
func attemptTimeout(timeout, left time.Duration, limited bool) (time.Duration, bool) {
	switch {
	case !limited:
		return timeout, true
	case left <= 0:
		return 0, false
	case timeout <= 0 || left < timeout:
		return left, true
	}
	return timeout, true
}
