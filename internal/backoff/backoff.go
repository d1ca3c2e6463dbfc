package backoff

import (
	"hash/fnv"
	"math"
	"strconv"
	"time"
)

// Temporal's retry policy defaults, used when a policy leaves a field zero.
const (
	DefaultInitialInterval    = time.Second
	DefaultBackoffCoefficient = 2.0
	// DefaultMaximumFactor: without a MaximumInterval, the delay stops growing at 100
	// times the initial interval.
	DefaultMaximumFactor = 100
)

// JitterFraction is how far a jittered delay may be from the plain one: ±20%.
const JitterFraction = 0.2

// Policy is the part of a retry policy that decides the delay between attempts.
type Policy struct {
	InitialInterval    time.Duration
	BackoffCoefficient float64
	MaximumInterval    time.Duration
}

// Delay is the plain delay before attempt next (2 for the first retry): the initial
// interval times the coefficient to the power next-2, never above the maximum interval.
// Zero fields take Temporal's defaults; next below 2 is treated as 2.
func (p Policy) Delay(next int) time.Duration {
	initial := p.InitialInterval
	if initial <= 0 {
		initial = DefaultInitialInterval
	}
	coef := p.BackoffCoefficient
	if coef < 1 {
		coef = DefaultBackoffCoefficient
	}
	maxd := p.MaximumInterval
	if maxd <= 0 {
		maxd = DefaultMaximumFactor * initial
	}
	n := max(next, 2) - 2
	d := float64(initial) * math.Pow(coef, float64(n))
	if d >= float64(maxd) || math.IsInf(d, 0) || math.IsNaN(d) {
		return maxd
	}
	return time.Duration(d)
}

// Jitter moves d by a factor in [1-JitterFraction, 1+JitterFraction] chosen by hashing
// seed and attempt: deterministic for the same inputs, spread across seeds. Seed the run
// and step, e.g. runID + "/" + activityID.
func Jitter(d time.Duration, seed string, attempt int) time.Duration {
	if d <= 0 {
		return d
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(strconv.Itoa(attempt)))
	// u in [0, 1): 53 bits of the hash.
	u := float64(h.Sum64()>>11) / float64(uint64(1)<<53)
	f := 1 - JitterFraction + 2*JitterFraction*u
	return time.Duration(float64(d) * f)
}

// Next is the jittered delay before attempt next of a step seeded by seed.
func (p Policy) Next(seed string, next int) time.Duration {
	return Jitter(p.Delay(next), seed, next)
}
