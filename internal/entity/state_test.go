package entity

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/protocol"
)

// The pure state rules of the entities, without Temporal.

func TestSemaphoreAcquire(t *testing.T) {
	tests := []struct {
		name        string
		st          SemaphoreState
		run         string
		limit       int
		wantHeld    bool
		wantLimit   int
		wantHolders []string
		wantWaiting []string
	}{
		{"a new run joins the queue", SemaphoreState{Limit: 1}, "r1", 0, false, 1, nil, []string{"r1"}},
		{"behind the others", SemaphoreState{Limit: 1, Holders: []string{"h"}, Waiting: []string{"w"}}, "r1", 0,
			false, 1, []string{"h"}, []string{"w", "r1"}},
		{"a waiter asking again joins once", SemaphoreState{Limit: 1, Holders: []string{"h"}, Waiting: []string{"r1", "w"}}, "r1", 0,
			false, 1, []string{"h"}, []string{"r1", "w"}},
		{"a holder asking again is held", SemaphoreState{Limit: 2, Holders: []string{"h", "r1"}}, "r1", 0,
			true, 2, []string{"h", "r1"}, nil},
		{"limit > 0 updates the limit", SemaphoreState{Limit: 1}, "r1", 3, false, 3, nil, []string{"r1"}},
		{"a holder's limit updates it too", SemaphoreState{Limit: 1, Holders: []string{"r1"}}, "r1", 4, true, 4, []string{"r1"}, nil},
		{"limit 0 keeps it", SemaphoreState{Limit: 5}, "r1", 0, false, 5, nil, []string{"r1"}},
		{"a negative limit keeps it", SemaphoreState{Limit: 5}, "r1", -2, false, 5, nil, []string{"r1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.st
			assert.Equal(t, tt.wantHeld, st.Acquire(tt.run, tt.limit))
			assert.Equal(t, tt.wantLimit, st.Limit)
			assert.Equal(t, tt.wantHolders, st.Holders)
			assert.Equal(t, tt.wantWaiting, st.Waiting)
		})
	}
}

func TestSemaphoreRelease(t *testing.T) {
	base := func() SemaphoreState {
		return SemaphoreState{Limit: 2, Holders: []string{"h1", "h2"}, Waiting: []string{"w1", "w2"}}
	}
	tests := []struct {
		name        string
		run         string
		wantHolders []string
		wantWaiting []string
	}{
		{"a holder gives its permit back", "h1", []string{"h2"}, []string{"w1", "w2"}},
		{"a waiter leaves the queue", "w2", []string{"h1", "h2"}, []string{"w1"}},
		{"a stranger changes nothing", "nobody", []string{"h1", "h2"}, []string{"w1", "w2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := base()
			st.Release(tt.run)
			assert.Equal(t, tt.wantHolders, st.Holders)
			assert.Equal(t, tt.wantWaiting, st.Waiting)
			assert.Equal(t, 2, st.Limit)
		})
	}
	t.Run("does not write into the caller's slices", func(t *testing.T) {
		holders := []string{"h1", "h2", "h3"}
		st := SemaphoreState{Holders: holders}
		st.Release("h1")
		assert.Equal(t, []string{"h2", "h3"}, st.Holders)
		assert.Equal(t, []string{"h1", "h2", "h3"}, holders, "a memo already taken of the state is kept")
	})
}

func TestSemaphoreNext(t *testing.T) {
	tests := []struct {
		name        string
		st          SemaphoreState
		wantRun     string
		wantOK      bool
		wantHolders []string
		wantWaiting []string
	}{
		{"first come first served", SemaphoreState{Limit: 2, Holders: []string{"h"}, Waiting: []string{"w1", "w2"}},
			"w1", true, []string{"h", "w1"}, []string{"w2"}},
		{"full", SemaphoreState{Limit: 2, Holders: []string{"h1", "h2"}, Waiting: []string{"w1"}},
			"", false, []string{"h1", "h2"}, []string{"w1"}},
		{"over the limit (lowered)", SemaphoreState{Limit: 1, Holders: []string{"h1", "h2"}, Waiting: []string{"w1"}},
			"", false, []string{"h1", "h2"}, []string{"w1"}},
		{"nobody waits", SemaphoreState{Limit: 3, Holders: []string{"h1"}}, "", false, []string{"h1"}, nil},
		{"empty", SemaphoreState{Limit: 1}, "", false, nil, nil},
		{"limit 0 counts as 1: free", SemaphoreState{Waiting: []string{"w1", "w2"}}, "w1", true, []string{"w1"}, []string{"w2"}},
		{"limit 0 counts as 1: full", SemaphoreState{Holders: []string{"h"}, Waiting: []string{"w1"}}, "", false, []string{"h"}, []string{"w1"}},
		{"a negative limit counts as 1", SemaphoreState{Limit: -3, Holders: []string{"h"}, Waiting: []string{"w1"}},
			"", false, []string{"h"}, []string{"w1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.st
			run, ok := st.Next()
			assert.Equal(t, tt.wantRun, run)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantHolders, st.Holders)
			assert.Equal(t, tt.wantWaiting, st.Waiting)
		})
	}
}

func TestSemaphoreDropAndIdle(t *testing.T) {
	st := SemaphoreState{Limit: 1, Holders: []string{"h"}, Waiting: []string{"w"}}
	assert.False(t, st.Idle())
	st.Drop("w")
	assert.Equal(t, []string{"w"}, st.Waiting, "Drop takes a permit, not a place in the queue")
	st.Drop("h")
	assert.Empty(t, st.Holders)
	assert.False(t, st.Idle(), "w still waits")
	run, ok := st.Next()
	require.True(t, ok)
	assert.Equal(t, "w", run)
	assert.False(t, st.Idle(), "w holds")
	st.Drop("nobody")
	assert.Equal(t, []string{"w"}, st.Holders)
	st.Release("w")
	assert.True(t, st.Idle())
	assert.True(t, (&SemaphoreState{}).Idle(), "the zero value is idle")
}

func TestSemaphoreLimitTwoFiveRuns(t *testing.T) {
	st := SemaphoreState{Group: "g"}
	var granted []string
	grant := func() {
		for {
			run, ok := st.Next()
			if !ok {
				return
			}
			granted = append(granted, run)
		}
	}
	check := func() {
		t.Helper()
		assert.LessOrEqual(t, len(st.Holders), 2, "never more than 2 holders: %v", st.Holders)
	}
	for i := 1; i <= 5; i++ {
		assert.False(t, st.Acquire(fmt.Sprintf("r%d", i), 2))
		grant()
		check()
	}
	assert.Equal(t, []string{"r1", "r2"}, st.Holders)
	assert.Equal(t, []string{"r3", "r4", "r5"}, st.Waiting)
	// The holders end one by one, oldest first; the waiters get their turn.
	for len(st.Holders) > 0 {
		st.Release(st.Holders[0])
		grant()
		check()
	}
	assert.Equal(t, []string{"r1", "r2", "r3", "r4", "r5"}, granted, "all 5 got a permit, in arrival order")
	assert.True(t, st.Idle())
}

func TestControlPauseHoldResume(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	var st ControlState // the zero value: maps nil
	st.Pause(protocol.ControlMessage{Workflow: "deploy", By: "alice", Reason: "freeze"}, t0)
	st.Pause(protocol.ControlMessage{Workflow: "build", By: "bob"}, t0.Add(time.Minute))
	assert.Equal(t, []protocol.PausedType{
		{Workflow: "build", By: "bob", Since: t0.Add(time.Minute)},
		{Workflow: "deploy", By: "alice", Reason: "freeze", Since: t0},
	}, st.PausedList(), "sorted by name")

	assert.Nil(t, st.Hold(protocol.ControlMessage{Workflow: "deploy", RunID: "d-1"}), "held: nothing to release")
	assert.Nil(t, st.Hold(protocol.ControlMessage{Workflow: "deploy", RunID: "d-2"}))
	assert.Nil(t, st.Hold(protocol.ControlMessage{Workflow: "build", RunID: "b-1"}))
	assert.Equal(t, map[string][]string{"deploy": {"d-1", "d-2"}, "build": {"b-1"}}, st.Held)

	assert.Equal(t, []string{"d-1", "d-2"}, st.Resume("deploy"), "the held runs of that type, in order")
	assert.Equal(t, map[string][]string{"build": {"b-1"}}, st.Held, "the other type's runs stay held")
	assert.Equal(t, []protocol.PausedType{{Workflow: "build", By: "bob", Since: t0.Add(time.Minute)}}, st.PausedList(), "unpaused")

	assert.Equal(t, []string{"d-3"}, st.Hold(protocol.ControlMessage{Workflow: "deploy", RunID: "d-3"}),
		"a run of a type resumed while it was on its way is released at once")
	assert.NotContains(t, st.Held, "deploy")
	assert.Empty(t, st.Resume("deploy"), "resumed twice: nothing more")
	assert.Equal(t, []string{"b-1"}, st.Resume("build"))
	assert.Empty(t, st.PausedList())
	assert.Empty(t, st.Held)
}

func TestControlPauseAgainKeepsHeldRuns(t *testing.T) {
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	var st ControlState
	st.Pause(protocol.ControlMessage{Workflow: "deploy", By: "alice"}, t0)
	assert.Nil(t, st.Hold(protocol.ControlMessage{Workflow: "deploy", RunID: "d-1"}))
	st.Pause(protocol.ControlMessage{Workflow: "deploy", By: "bob", Reason: "still"}, t0.Add(time.Hour))
	assert.Equal(t, []protocol.PausedType{{Workflow: "deploy", By: "bob", Reason: "still", Since: t0.Add(time.Hour)}}, st.PausedList(),
		"the latest pause is shown")
	assert.Equal(t, []string{"d-1"}, st.Resume("deploy"))
}

func TestControlZeroValue(t *testing.T) {
	t.Run("PausedList", func(t *testing.T) {
		var st ControlState
		assert.Equal(t, []protocol.PausedType{}, st.PausedList(), "an empty list, not null, in the memo")
	})
	t.Run("Resume", func(t *testing.T) {
		var st ControlState
		assert.Empty(t, st.Resume("deploy"))
	})
	t.Run("Hold", func(t *testing.T) {
		var st ControlState
		assert.Equal(t, []string{"r1"}, st.Hold(protocol.ControlMessage{Workflow: "deploy", RunID: "r1"}), "nothing paused: released")
		assert.Empty(t, st.Held)
	})
	t.Run("decoded from JSON nulls", func(t *testing.T) {
		var st ControlState
		require.NoError(t, json.Unmarshal([]byte(`{"paused":null,"held":null}`), &st))
		st.Pause(protocol.ControlMessage{Workflow: "deploy"}, time.Time{})
		assert.Nil(t, st.Hold(protocol.ControlMessage{Workflow: "deploy", RunID: "r1"}))
		assert.Equal(t, []string{"r1"}, st.Resume("deploy"))
	})
}

// entry is a catalog entry as core.WorkflowInfo writes it, with the fields the tests read.
type entry struct {
	Name            string `json:"name"`
	Version         string `json:"version,omitempty"`
	OverallQuotaUSD string `json:"overall_quota_usd,omitempty"`
}

func raw(t *testing.T, es ...entry) []json.RawMessage {
	t.Helper()
	out := make([]json.RawMessage, 0, len(es))
	for _, e := range es {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}

func entries(t *testing.T, c CatalogState) []entry {
	t.Helper()
	out := make([]entry, 0, len(c.Workflows))
	for _, w := range c.Workflows {
		var e entry
		require.NoError(t, json.Unmarshal(w, &e))
		out = append(out, e)
	}
	return out
}

func names(t *testing.T, c CatalogState) []string {
	t.Helper()
	out := []string{}
	for _, e := range entries(t, c) {
		out = append(out, e.Name)
	}
	return out
}

func lookup(t *testing.T, c CatalogState, name string) (entry, bool) {
	t.Helper()
	for _, e := range entries(t, c) {
		if e.Name == name {
			return e, true
		}
	}
	return entry{}, false
}

// TestCatalogMerge is flow's TestCatalog (define_test.go) on raw entries.
func TestCatalogMerge(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := CatalogState{TaskQueue: "q", Workflows: raw(t,
		entry{Name: "zeta", Version: "1"}, entry{Name: "alpha", Version: "1"}, entry{Name: "mid", Version: "1"},
	)}
	c.Merge(raw(t, entry{Name: "mid", Version: "2"}, entry{Name: "beta", Version: "1"}), t0)

	assert.Equal(t, []string{"alpha", "beta", "mid", "zeta"}, names(t, c), "sorted, new added, others kept")
	assert.Equal(t, t0, c.UpdatedAt)
	assert.Equal(t, "q", c.TaskQueue)
	mid, ok := lookup(t, c, "mid")
	require.True(t, ok)
	assert.Equal(t, "2", mid.Version, "replaced by name")
	zeta, ok := lookup(t, c, "zeta")
	require.True(t, ok)
	assert.Equal(t, "1", zeta.Version)
	_, ok = lookup(t, c, "nope")
	assert.False(t, ok)

	c.Merge(nil, t0.Add(time.Hour))
	assert.Equal(t, []string{"alpha", "beta", "mid", "zeta"}, names(t, c), "an empty publish keeps everything")
	assert.Equal(t, t0.Add(time.Hour), c.UpdatedAt)

	var empty CatalogState
	assert.Equal(t, []string{}, names(t, empty))
	empty.Merge(raw(t, entry{Name: "b"}, entry{Name: "a"}, entry{Name: "b", Version: "last"}), t0)
	assert.Equal(t, []string{"a", "b"}, names(t, empty))
	b, _ := lookup(t, empty, "b")
	assert.Equal(t, "last", b.Version, "the last entry of a publish wins")
	assert.Equal(t, "gateflow-catalog-q", protocol.CatalogID("q"))
}

func TestCatalogMergeOverallQuota(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := CatalogState{TaskQueue: "q"}
	c.Merge(raw(t, entry{Name: "a", OverallQuotaUSD: "50"}, entry{Name: "b", OverallQuotaUSD: "50"}), t0)
	assert.Equal(t, "50", c.MonthlyQuotaUSD)

	c.Merge(raw(t, entry{Name: "c", OverallQuotaUSD: "80"}), t0.Add(time.Minute))
	assert.Equal(t, "80", c.MonthlyQuotaUSD, "the latest publisher's setting")

	c.Merge(nil, t0.Add(2*time.Minute))
	assert.Equal(t, "80", c.MonthlyQuotaUSD, "an empty publish keeps it")

	c.Merge(raw(t, entry{Name: "a"}), t0.Add(3*time.Minute))
	assert.Empty(t, c.MonthlyQuotaUSD, "a publisher with no overall quota clears it")
	assert.Equal(t, []string{"a", "b", "c"}, names(t, c))
}

func TestCatalogMergeKeepsEntriesAsPublished(t *testing.T) {
	c := CatalogState{}
	in := []json.RawMessage{json.RawMessage(`{"name":"a","guards":{"max_steps":3},"extra":[1,2]}`)}
	c.Merge(in, time.Time{})
	require.Len(t, c.Workflows, 1)
	assert.JSONEq(t, `{"name":"a","guards":{"max_steps":3},"extra":[1,2]}`, string(c.Workflows[0]),
		"fields the entity does not know are kept")
}

func TestControlStateHoldListsARetriedRunOnce(t *testing.T) {
	var s ControlState
	s.Pause(protocol.ControlMessage{Workflow: "release"}, time.Time{})
	assert.Empty(t, s.Hold(protocol.ControlMessage{Workflow: "release", RunID: "r1"}))
	assert.Empty(t, s.Hold(protocol.ControlMessage{Workflow: "release", RunID: "r1"}), "the hold activity retried")
	assert.Equal(t, []string{"r1"}, s.Resume("release"), "released once")
}
