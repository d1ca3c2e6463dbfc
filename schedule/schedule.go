package schedule

import (
	"encoding/json"
	"fmt"
	"regexp"

	enumspb "go.temporal.io/api/enums/v1"
)

// Info is a schedule a flow declares with flow.Schedule; the worker creates or updates a
// Temporal Schedule for it when it starts.
type Info struct {
	// ID names the schedule among the flow's (see the option ID); empty: it is named by its
	// position.
	ID string `json:"id,omitempty"`
	// Spec is a cron expression ("0 9 * * 1-5") or "@every 10m", "@hourly", "@daily".
	Spec string `json:"spec"`
	// Input is the scheduled runs' input (JSON).
	Input json.RawMessage `json:"input,omitempty"`
	// Overlap is what happens when a run is due while the last one still runs (empty:
	// OverlapSkip).
	Overlap OverlapPolicy `json:"overlap,omitempty"`
	// Paused creates the schedule paused.
	Paused bool `json:"paused,omitempty"`
}

// Option adjusts a schedule.
type Option func(*Info) error

// idPattern is what a schedule's ID looks like: it starts with a letter, so it
// never looks like a position.
var idPattern = regexp.MustCompile(`^[a-z][a-z0-9_.\-]{0,62}$`)

// ID names the schedule id among the flow's: its Temporal Schedule is
// "gateflow-schedule/<flow>/<id>@<queue>" rather than ".../<position>@<queue>", so adding,
// removing or reordering the flow's schedules keeps it (its pauses, notes and recent
// runs). id is 1-63 lower-case letters, digits and _.- starting with a letter, unique
// among the flow's schedules.
func ID(id string) Option {
	return func(s *Info) error {
		if !idPattern.MatchString(id) {
			return fmt.Errorf("schedule id %q: want 1-63 lower-case letters, digits and _.- starting with a letter", id)
		}
		s.ID = id
		return nil
	}
}

// Input sets the scheduled runs' input (encoded as JSON).
func Input(v any) Option {
	return func(s *Info) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("schedule input: %w", err)
		}
		s.Input = b
		return nil
	}
}

// OverlapPolicy is what a schedule does when a run is due while the last one still runs
// (Temporal's ScheduleOverlapPolicy).
type OverlapPolicy string

// Overlap policies.
const (
	// OverlapSkip skips the due run (the default).
	OverlapSkip OverlapPolicy = "skip"
	// OverlapBufferOne starts the due run when the last one ends, keeping at most one.
	OverlapBufferOne OverlapPolicy = "buffer_one"
	// OverlapBufferAll starts every due run in turn.
	OverlapBufferAll OverlapPolicy = "buffer_all"
	// OverlapCancelOther cancels the running run and starts the due one.
	OverlapCancelOther OverlapPolicy = "cancel_other"
	// OverlapTerminateOther terminates the running run and starts the due one.
	OverlapTerminateOther OverlapPolicy = "terminate_other"
	// OverlapAllowAll starts the due run alongside.
	OverlapAllowAll OverlapPolicy = "allow_all"
)

// Overlap sets the schedule's overlap policy (see OverlapPolicy).
func Overlap(policy OverlapPolicy) Option {
	return func(s *Info) error {
		if _, err := policy.Temporal(); err != nil {
			return err
		}
		s.Overlap = policy
		return nil
	}
}

// Paused creates the schedule paused (flowctl schedules unpause starts it).
func Paused() Option {
	return func(s *Info) error { s.Paused = true; return nil }
}

var overlaps = map[OverlapPolicy]enumspb.ScheduleOverlapPolicy{
	"":                    enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	OverlapSkip:           enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	OverlapBufferOne:      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	OverlapBufferAll:      enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL,
	OverlapCancelOther:    enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
	OverlapTerminateOther: enumspb.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER,
	OverlapAllowAll:       enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// Temporal is the Temporal overlap policy of p: empty is OverlapSkip; an unknown policy
// is an error naming the known ones.
func (p OverlapPolicy) Temporal() (enumspb.ScheduleOverlapPolicy, error) {
	t, ok := overlaps[p]
	if !ok {
		return 0, fmt.Errorf("overlap %q: want skip, buffer_one, buffer_all, cancel_other, terminate_other or allow_all", p)
	}
	return t, nil
}
