package backoff

import (
	"fmt"
	"testing"
	"time"
)

func TestDelayFollowsTemporalDefaults(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		next int
		want time.Duration
	}{
		{Policy{}, 2, time.Second},
		{Policy{}, 3, 2 * time.Second},
		{Policy{}, 4, 4 * time.Second},
		{Policy{}, 1, time.Second},
		{Policy{}, 30, 100 * time.Second},
		{Policy{InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 3}, 4, 4500 * time.Millisecond},
		{Policy{InitialInterval: time.Second, MaximumInterval: 3 * time.Second}, 5, 3 * time.Second},
		{Policy{InitialInterval: time.Second, BackoffCoefficient: 1}, 9, time.Second},
		{Policy{}, 10000, 100 * time.Second},
	} {
		if got := tc.p.Delay(tc.next); got != tc.want {
			t.Errorf("%+v.Delay(%d) = %s, want %s", tc.p, tc.next, got, tc.want)
		}
	}
}

func TestJitterIsDeterministicAndWithinTwentyPercent(t *testing.T) {
	d := 10 * time.Second
	lo, hi := 8*time.Second, 12*time.Second
	seen := map[time.Duration]bool{}
	for i := range 500 {
		seed := fmt.Sprintf("run-%d/build", i)
		for attempt := 2; attempt < 5; attempt++ {
			j := Jitter(d, seed, attempt)
			if j < lo || j > hi {
				t.Fatalf("Jitter(%s, %q, %d) = %s, outside [%s, %s]", d, seed, attempt, j, lo, hi)
			}
			if again := Jitter(d, seed, attempt); again != j {
				t.Fatalf("Jitter(%q, %d) = %s then %s: not deterministic", seed, attempt, j, again)
			}
			seen[j] = true
		}
	}
	if len(seen) < 1000 {
		t.Errorf("1,500 seeds and attempts gave only %d distinct delays: the jitter does not spread", len(seen))
	}
	// Both halves of the range are used.
	var below, above int
	for j := range seen {
		if j < d {
			below++
		} else {
			above++
		}
	}
	if below < 300 || above < 300 {
		t.Errorf("delays below %s: %d, above: %d; want both well used", d, below, above)
	}
}

func TestJitterSeparatesRunsAndSteps(t *testing.T) {
	a := Jitter(time.Minute, "run-1/build", 2)
	b := Jitter(time.Minute, "run-2/build", 2)
	c := Jitter(time.Minute, "run-1/test", 2)
	if a == b && a == c {
		t.Errorf("different runs and steps got the same delay %s", a)
	}
	if Jitter(0, "x", 2) != 0 {
		t.Error("no delay must stay no delay")
	}
}

func ExamplePolicy_Next() {
	p := Policy{InitialInterval: time.Second}
	d := p.Next("0193-run-id/summarize", 3) // before the third attempt: 2s ±20%
	fmt.Println(d >= 1600*time.Millisecond && d <= 2400*time.Millisecond)
	// Output: true
}
