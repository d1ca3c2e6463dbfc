package flowdef

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestValidateBounds: a definition's bounds that no run could reach under the limits in
// force (its own limits, else the worker's guards) are errors naming the field, the
// value and the limit.
func TestValidateBounds(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		guards    *WorkerGuards
		want      string // "" means valid
	}{
		{"issue 31: a billion iterations", "name: x\nsteps: [{id: l, loop: {while: 'true', max_iterations: 1000000000, steps: [{uses: shell}]}}]\n", nil,
			"f.yaml:2:55: loop 'l': max_iterations is 1000000000, over the limit of 10000 (the worker's steps guard) (hint: each iteration counts as steps: lower max_iterations, or raise limits.steps if the worker allows it)"},
		{"at the limit", "name: x\nsteps: [{id: l, loop: {while: 'true', max_iterations: 10000, steps: [{uses: shell}]}}]\n", nil, ""},
		{"over limits.steps", "name: x\nlimits: {steps: 50}\nsteps: [{id: l, loop: {until: 'true', max_iterations: 51, steps: [{uses: shell}]}}]\n", nil,
			"loop 'l': max_iterations is 51, over the limit of 50 (limits.steps)"},
		{"limits.steps raises the bound", "name: x\nlimits: {steps: 50000}\nsteps: [{id: l, loop: {until: 'true', max_iterations: 20000, steps: [{uses: shell}]}}]\n", nil, ""},
		{"a worker with a higher guard", "name: x\nsteps: [{id: l, loop: {while: 'true', max_iterations: 20000, steps: [{uses: shell}]}}]\n", &WorkerGuards{MaxSteps: 100_000}, ""},
		{"a worker without a steps guard", "name: x\nsteps: [{id: l, loop: {while: 'true', max_iterations: 1000000000, steps: [{uses: shell}]}}]\n", &WorkerGuards{MaxSteps: -1}, ""},
		{"foreach max_parallel", "name: x\nsteps: [{id: f, foreach: {over: '[1]', max_parallel: 51, steps: [{uses: shell}]}}]\n", nil,
			"foreach 'f': max_parallel is 51, over the limit of 50 (the worker's fan-out guard)"},
		{"foreach max_parallel under limits.fan_out", "name: x\nlimits: {fan_out: 5}\nsteps: [{id: f, foreach: {over: '[1]', max_parallel: 6, steps: [{uses: shell}]}}]\n", nil,
			"foreach 'f': max_parallel is 6, over the limit of 5 (limits.fan_out)"},
		{"parallel branches", "name: x\nlimits: {fan_out: 2}\nsteps: [{id: p, parallel: [{uses: shell}, {uses: shell}, {uses: shell}]}]\n", nil,
			"parallel 'p': the branch count is 3, over the limit of 2 (limits.fan_out)"},
		{"retry attempts over int32", "name: x\nsteps: [{id: a, uses: shell, retry: {max_attempts: 3000000000}}]\n", nil,
			"step 'a': retry.max_attempts is 3000000000, over the limit of 2147483647"},
		{"inside a sub-list", "name: x\nsteps: [{id: i, if: 'true', then: [{id: l, loop: {while: 'true', max_iterations: 10001, steps: [{uses: shell}]}}]}]\n", nil,
			"loop 'l': max_iterations is 10001, over the limit of 10000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.guards != nil {
				opts = append(opts, WithWorkerGuards(*tt.guards))
			}
			got := validate(t, &StaticRegistry{}, tt.src, opts...)
			switch {
			case tt.want == "" && got != "":
				t.Fatalf("want valid, got:\n%s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Fatalf("want %q, got:\n%s", tt.want, got)
			}
		})
	}
}

// TestValidateBoundsProperty: over random guards, limits and loop bounds, Validate
// refuses max_iterations exactly when it is over the steps limit in force: limits.steps
// when written positive, else the worker's guard (none when negative).
func TestValidateBoundsProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	pick := func(xs ...int) int { return xs[rng.Intn(len(xs))] }
	refused, accepted := 0, 0
	for i := 0; i < 500; i++ {
		guard := pick(0, -1, 1+rng.Intn(20_000))
		limit := pick(-1, 0, 1+rng.Intn(20_000)) // -1: not written
		iters := pick(1+rng.Intn(30_000), 1_000_000_000, 2_147_483_647)
		src := "name: x\n"
		if limit >= 0 {
			src += fmt.Sprintf("limits: {steps: %d}\n", limit)
		}
		src += fmt.Sprintf("steps: [{id: l, loop: {while: 'true', max_iterations: %d, steps: [{uses: shell}]}}]\n", iters)
		bound, from := DefaultWorkerGuards.MaxSteps, "the worker's steps guard"
		if guard != 0 {
			bound = guard
		}
		if limit > 0 {
			bound, from = limit, "limits.steps"
		}
		got := validate(t, &StaticRegistry{}, src, WithWorkerGuards(WorkerGuards{MaxSteps: guard}))
		if bound > 0 && iters > bound {
			refused++
			want := fmt.Sprintf("max_iterations is %d, over the limit of %d (%s)", iters, bound, from)
			if !strings.Contains(got, want) {
				t.Fatalf("guard %d, limits.steps %d, max_iterations %d: want %q, got %q", guard, limit, iters, want, got)
			}
			continue
		}
		accepted++
		if got != "" {
			t.Fatalf("guard %d, limits.steps %d, max_iterations %d: want valid, got %q", guard, limit, iters, got)
		}
	}
	if refused < 100 || accepted < 100 {
		t.Fatalf("lopsided generator: %d refused, %d accepted", refused, accepted)
	}
}
