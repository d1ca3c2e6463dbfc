//go:build soak

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/integration/testflows"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/signals"
)

// The soak (make soak): SOAK_RUNS runs of testflows.Soak wait on their gate across
// SOAK_WORKERS testworker processes; for SOAK_DURATION, votes (approvals, rejections,
// duplicates, votes by people not allowed), signals (right and wrong keys) and
// cancellations arrive at random (SOAK_SEED, logged), and workers are restarted with
// SIGTERM. A model of each run predicts every answer and its end: at the end every run must
// be closed with the status the model expects, and the votes its gate counted must be the
// ones the model saw accepted, in order, none lost and none counted twice.

// soakParams are the soak's parameters, from the environment.
type soakParams struct {
	runs, workers int
	duration      time.Duration
	seed          uint64
	senders       int
}

func soakParamsFromEnv(t *testing.T) soakParams {
	t.Helper()
	p := soakParams{runs: 1000, workers: 3, duration: 10 * time.Minute, seed: uint64(time.Now().UnixNano()), senders: 8}
	for name, dst := range map[string]*int{"SOAK_RUNS": &p.runs, "SOAK_WORKERS": &p.workers, "SOAK_SENDERS": &p.senders} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, "%s=%q: want a whole number", name, v)
			require.Positive(t, n, "%s=%q: want 1 or more", name, v)
			*dst = n
		}
	}
	if v := os.Getenv("SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "SOAK_DURATION=%q: want a duration such as 10m", v)
		require.Positive(t, d, "SOAK_DURATION=%q: want more than 0", v)
		p.duration = d
	}
	if v := os.Getenv("SOAK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "SOAK_SEED=%q: want a whole number", v)
		p.seed = s
	}
	return p
}

// soakPhase is where the model says a run is.
type soakPhase int

const (
	phaseGate     soakPhase = iota // the gate is open
	phaseApproved                  // the gate approved; the run waits for its signal
	phaseEnded                     // nothing may change the run's end any more
)

// soakRun is the model of one run.
type soakRun struct {
	id, key   string
	phase     soakPhase
	signalled bool            // the right-key signal was sent
	payload   int             // its Ping.N
	counted   []approval.Vote // votes the gate must have counted, in order (By, Kind)
	dups      int             // approvals the gate must keep as duplicates
	want      runs.Status
}

func (r *soakRun) approvals() []string {
	var out []string
	for _, v := range r.counted {
		if v.Kind == approval.Approve {
			out = append(out, v.By)
		}
	}
	return out
}

// soakStats are one sender's counts.
type soakStats struct {
	votesSent, votesAccepted, votesRefused, duplicates int
	signalsRight, signalsWrong, cancels                int
	unexpected                                         []string
}

func (s *soakStats) add(o soakStats) {
	s.votesSent += o.votesSent
	s.votesAccepted += o.votesAccepted
	s.votesRefused += o.votesRefused
	s.duplicates += o.duplicates
	s.signalsRight += o.signalsRight
	s.signalsWrong += o.signalsWrong
	s.cancels += o.cancels
	s.unexpected = append(s.unexpected, o.unexpected...)
}

func (s *soakStats) failf(format string, args ...any) {
	s.unexpected = append(s.unexpected, fmt.Sprintf(format, args...))
}

// soakSender drives its share of the runs; it alone touches their models.
type soakSender struct {
	c     *flowclient.Client
	rng   *rand.Rand
	runs  []*soakRun
	stats soakStats
}

func (s *soakSender) vote(ctx context.Context, r *soakRun, by string, kind approval.VoteKind) {
	s.stats.votesSent++
	allowed := slices.Contains(testflows.SoakApprovers, by)
	dup := kind == approval.Approve && slices.Contains(r.approvals(), by)
	wantRefused := !allowed || r.phase != phaseGate
	res, err := s.c.Vote(ctx, r.id, approval.Vote{Gate: "ship", Kind: kind, By: by, Comment: "soak"})
	var refused *flowclient.RefusedError
	switch {
	case errors.As(err, &refused):
		s.stats.votesRefused++
		if !wantRefused {
			s.stats.failf("%s: %s's %s was refused, the model expected it to count: %v", r.id, by, kind, err)
		}
		return
	case err != nil:
		s.stats.failf("%s: %s's %s: %v", r.id, by, kind, err)
		r.phase, r.want = phaseEnded, "unknown (a vote's fate is not known)"
		return
	}
	s.stats.votesAccepted++
	if wantRefused {
		s.stats.failf("%s: %s's %s was accepted (%s), the model expected a refusal", r.id, by, kind, res.Status)
		return
	}
	if dup {
		s.stats.duplicates++
		r.dups++
		if res.Status != approval.VoteDuplicate {
			s.stats.failf("%s: %s approved twice: status %s, want duplicate", r.id, by, res.Status)
		}
		return
	}
	r.counted = append(r.counted, approval.Vote{By: by, Kind: kind})
	want := approval.VoteOpen
	switch {
	case kind == approval.Reject:
		want, r.phase, r.want = approval.VoteStatus(approval.Rejected), phaseEnded, runs.StatusRejected
	case len(r.approvals()) >= testflows.SoakRequired:
		want, r.phase = approval.VoteStatus(approval.Approved), phaseApproved
		if r.signalled {
			r.phase, r.want = phaseEnded, runs.StatusCompleted
		}
	}
	if res.Status != want || res.Approvals != len(r.approvals()) {
		s.stats.failf("%s: %s's %s: status %s with %d approvals, want %s with %d", r.id, by, kind, res.Status, res.Approvals, want, len(r.approvals()))
	}
}

func (s *soakSender) signal(ctx context.Context, r *soakRun, right bool) {
	key, n := r.key+"-wrong", s.rng.IntN(1_000_000)
	if right {
		key = r.key
	}
	payload, _ := json.Marshal(testflows.Ping{N: n})
	if _, err := s.c.Signal(ctx, r.id, signals.Envelope{Name: "deploy", Key: key, Payload: payload}); err != nil {
		s.stats.failf("%s: signal deploy/%s: %v", r.id, key, err)
		return
	}
	if !right {
		s.stats.signalsWrong++
		return
	}
	s.stats.signalsRight++
	r.signalled, r.payload = true, n
	if r.phase == phaseApproved {
		r.phase, r.want = phaseEnded, runs.StatusCompleted
	}
}

func (s *soakSender) cancel(ctx context.Context, r *soakRun) {
	s.stats.cancels++
	if err := s.c.Cancel(ctx, flowclient.CancelRequest{Run: r.id, Reason: "soak"}); err != nil {
		s.stats.failf("%s: cancel: %v", r.id, err)
		r.phase, r.want = phaseEnded, "unknown (a cancellation's fate is not known)"
		return
	}
	r.phase, r.want = phaseEnded, runs.StatusCancelled
}

// act sends one random message to one of the sender's runs still in play.
func (s *soakSender) act(ctx context.Context) bool {
	var live []*soakRun
	for _, r := range s.runs {
		if r.phase != phaseEnded {
			live = append(live, r)
		}
	}
	if len(live) == 0 {
		return false
	}
	r := live[s.rng.IntN(len(live))]
	approver := testflows.SoakApprovers[s.rng.IntN(len(testflows.SoakApprovers))]
	// Messages that end a run are rare enough that many runs still wait when the time is up.
	switch x := s.rng.IntN(100); {
	case x < 20:
		s.vote(ctx, r, approver, approval.Approve)
	case x < 32 && len(r.approvals()) > 0:
		s.vote(ctx, r, r.approvals()[0], approval.Approve) // a duplicate while the gate is open
	case x < 44:
		s.vote(ctx, r, []string{"mallory", "eve"}[s.rng.IntN(2)], approval.Approve)
	case x < 47:
		s.vote(ctx, r, approver, approval.Reject)
	case x < 57 && !r.signalled:
		s.signal(ctx, r, true)
	case x < 96:
		s.signal(ctx, r, false)
	default:
		s.cancel(ctx, r)
	}
	return true
}

// finish brings every run still in play to completion: the missing approvals, then its
// signal.
func (s *soakSender) finish(ctx context.Context) {
	for _, r := range s.runs {
		for _, by := range testflows.SoakApprovers {
			if r.phase == phaseGate && !slices.Contains(r.approvals(), by) {
				s.vote(ctx, r, by, approval.Approve)
			}
		}
		if r.phase == phaseApproved {
			s.signal(ctx, r, true)
		}
	}
}

// vmRSS is a process's resident set (VmRSS in /proc/PID/status), in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err, "VmRSS %q", v)
			return kb * 1024
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

func TestSoak(t *testing.T) {
	p := soakParamsFromEnv(t)
	report := func(format string, args ...any) {
		t.Logf(format, args...)
		fmt.Printf("soak: "+format+"\n", args...)
	}
	report("runs=%d workers=%d duration=%s senders=%d seed=%d (SOAK_SEED=%d repeats the choices, not their interleaving)",
		p.runs, p.workers, p.duration, p.senders, p.seed, p.seed)
	began := time.Now()
	queue := fmt.Sprintf("soak-%d", began.UnixNano())
	workers := make([]*exec.Cmd, p.workers)
	for i := range workers {
		workers[i] = startTestworker(t, queue)
	}
	rss := func() int64 {
		var sum int64
		for _, w := range workers {
			sum += vmRSS(t, w.Process.Pid)
		}
		return sum
	}
	c := flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "soak", DecisionTimeout: 2 * time.Minute})
	ctx := ctxT(t, p.duration+45*time.Minute)
	idle := rss()

	models := make([]*soakRun, p.runs)
	for i := range models {
		models[i] = &soakRun{id: fmt.Sprintf("soak-%d-%04d", began.Unix(), i), key: fmt.Sprintf("k%04d", i)}
	}
	parallel := func(f func(r *soakRun) error) error {
		var wg sync.WaitGroup
		errs := make([]error, len(models))
		next := make(chan int)
		for range p.senders {
			wg.Go(func() {
				for i := range next {
					errs[i] = f(models[i])
				}
			})
		}
		for i := range models {
			next <- i
		}
		close(next)
		wg.Wait()
		return errors.Join(errs...)
	}
	startedAt := time.Now()
	require.NoError(t, parallel(func(r *soakRun) error {
		_, err := c.Start(ctx, testflows.Soak.Name(), testflows.SoakInput{Key: r.key}, core.StartOptions{ID: r.id})
		return err
	}))
	started := time.Now()
	require.NoError(t, parallel(func(r *soakRun) error {
		for {
			d, err := c.Describe(ctx, r.id)
			if err == nil && d.Status == runs.StatusAwaitingApproval {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("%s never waited on its gate (last: %v %v)", r.id, d, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}))
	waiting := rss()
	report("%d runs started in %s, all waiting on their gate %s later", p.runs, started.Sub(startedAt).Round(time.Second),
		time.Since(started).Round(time.Second))
	report("worker memory: VmRSS of the %d workers %.1f MiB idle, %.1f MiB with every run waiting: %.1f KiB per waiting run",
		p.workers, float64(idle)/(1<<20), float64(waiting)/(1<<20), float64(waiting-idle)/1024/float64(p.runs))

	// The random phase: each sender owns every senders-th run, so its model is exact.
	senders := make([]*soakSender, p.senders)
	for i := range senders {
		senders[i] = &soakSender{c: c, rng: rand.New(rand.NewPCG(p.seed, uint64(i)))}
	}
	for i, r := range models {
		senders[i%p.senders].runs = append(senders[i%p.senders].runs, r)
	}
	interval := time.Duration(float64(p.duration) / float64(6*p.runs) * float64(p.senders)) // about 6 messages a run
	randomStart := time.Now()
	deadline := randomStart.Add(p.duration)
	var wg sync.WaitGroup
	for _, s := range senders {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				next := time.Now().Add(interval)
				if !s.act(ctx) {
					return
				}
				time.Sleep(time.Until(next))
			}
		})
	}
	restarts := 0
	for k := 1; k <= 2; k++ {
		time.Sleep(time.Until(deadline.Add(-p.duration * time.Duration(3-k) / 3)))
		i := k % len(workers)
		require.NoError(t, workers[i].Process.Signal(syscall.SIGTERM))
		_ = workers[i].Wait()
		workers[i] = startTestworker(t, queue)
		restarts++
		report("worker %d restarted (SIGTERM, then started again) %s into the random phase", i, time.Since(randomStart).Round(time.Second))
	}
	wg.Wait()
	afterRandom := rss()
	var total soakStats
	for _, s := range senders {
		total.add(s.stats)
	}
	report("random phase: %s; messages: %d votes sent, %d signals (right key %d, wrong key %d), %d cancellations",
		time.Since(randomStart).Round(time.Second), total.votesSent, total.signalsRight+total.signalsWrong, total.signalsRight, total.signalsWrong, total.cancels)

	// The end: every run still in play gets its approvals and its signal.
	inPlay := 0
	for _, r := range models {
		if r.phase != phaseEnded {
			inPlay++
		}
	}
	for _, s := range senders {
		s.stats = soakStats{}
		wg.Go(func() { s.finish(ctx) })
	}
	wg.Wait()
	var finish soakStats
	for _, s := range senders {
		finish.add(s.stats)
	}
	total.add(finish)

	// Every run must be closed as the model says, with the votes it saw counted.
	byStatus := map[runs.Status]int{}
	var mu sync.Mutex
	var mismatches []string
	_ = parallel(func(r *soakRun) error {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		d, err := c.Wait(wctx, r.id)
		var problems []string
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("wait: %v", err))
		case d.Status != r.want:
			problems = append(problems, fmt.Sprintf("status %s, the model expects %s", d.Status, r.want))
		case d.State == nil:
			problems = append(problems, "no state: "+d.StateError)
		}
		if err == nil && d.State != nil {
			var gate *approval.Gate
			for _, g := range d.State.Gates {
				if g.Name == "ship" {
					gate = g
				}
			}
			var got []approval.Vote
			dups := 0
			if gate != nil {
				for _, v := range gate.Votes {
					got = append(got, approval.Vote{By: v.By, Kind: v.Kind})
				}
				dups = len(gate.Duplicates)
			}
			if !slices.Equal(got, r.counted) || dups != r.dups {
				problems = append(problems, fmt.Sprintf("gate counted [%s] with %d duplicates, the model sent and saw accepted [%s] with %d",
					voteList(got), dups, voteList(r.counted), r.dups))
			}
			if r.want == runs.StatusCompleted {
				var out testflows.Ping
				if jerr := json.Unmarshal(d.Result, &out); jerr != nil || out.N != r.payload {
					problems = append(problems, fmt.Sprintf("result %s, want the right-key signal's payload %d", d.Result, r.payload))
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			byStatus[d.Status]++
		}
		for _, pr := range problems {
			mismatches = append(mismatches, r.id+": "+pr)
		}
		return nil
	})

	report("end: %d completed, %d rejected, %d cancelled, %d other, of %d runs; closing the %d runs still in play took %d votes and %d signals",
		byStatus[runs.StatusCompleted], byStatus[runs.StatusRejected], byStatus[runs.StatusCancelled],
		p.runs-byStatus[runs.StatusCompleted]-byStatus[runs.StatusRejected]-byStatus[runs.StatusCancelled], p.runs,
		inPlay, finish.votesSent, finish.signalsRight)
	report("votes: %d sent, %d accepted (%d counted, %d duplicates kept uncounted), %d refused (not allowed or gate closed); signals %d right key, %d wrong key; cancellations %d; worker restarts %d",
		total.votesSent, total.votesAccepted, total.votesAccepted-total.duplicates, total.duplicates, total.votesRefused,
		total.signalsRight, total.signalsWrong, total.cancels, restarts)
	report("worker VmRSS after the random phase %.1f MiB; total duration %s; unexpected answers %d; runs not as modelled %d",
		float64(afterRandom)/(1<<20), time.Since(began).Round(time.Second), len(total.unexpected), len(mismatches))
	for i, u := range total.unexpected {
		if i == 20 {
			t.Errorf("... and %d more unexpected answers", len(total.unexpected)-20)
			break
		}
		t.Error(u)
	}
	for i, m := range mismatches {
		if i == 20 {
			t.Errorf("... and %d more runs not as modelled", len(mismatches)-20)
			break
		}
		t.Error(m)
	}
	require.Equal(t, p.runs, byStatus[runs.StatusCompleted]+byStatus[runs.StatusRejected]+byStatus[runs.StatusCancelled],
		"every run is completed, rejected or cancelled")
}

// voteList reads "carol:approve, alice:reject".
func voteList(vs []approval.Vote) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.By + ":" + string(v.Kind)
	}
	return strings.Join(out, ", ")
}
