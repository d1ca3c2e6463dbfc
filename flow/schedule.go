package flow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gateflow/gateflow/internal/cronspec"
	"github.com/gateflow/gateflow/internal/protocol"
)

// ScheduleInfo is a schedule a flow declares with Schedule; the worker creates or updates a
// Temporal Schedule for it when it starts.
type ScheduleInfo struct {
	// ID names the schedule among the flow's (see ScheduleID); empty: it is named by its
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

// ScheduleOption adjusts a schedule.
type ScheduleOption func(*ScheduleInfo) error

// scheduleIDPattern is what a schedule's ID looks like: it starts with a letter, so it
// never looks like a position.
var scheduleIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_.\-]{0,62}$`)

// ScheduleID names the schedule id among the flow's: its Temporal Schedule is
// "gateflow-schedule/<flow>/<id>@<queue>" rather than ".../<position>@<queue>", so adding,
// removing or reordering the flow's schedules keeps it (its pauses, notes and recent
// runs). id is 1-63 lower-case letters, digits and _.- starting with a letter, unique
// among the flow's schedules.
func ScheduleID(id string) ScheduleOption {
	return func(s *ScheduleInfo) error {
		if !scheduleIDPattern.MatchString(id) {
			return fmt.Errorf("schedule id %q: want 1-63 lower-case letters, digits and _.- starting with a letter", id)
		}
		s.ID = id
		return nil
	}
}

// temporalScheduleID is the Temporal Schedule ID of the flow's n-th schedule s on queue:
// named by s.ID when it has one, else by n.
func temporalScheduleID(flow string, n int, s ScheduleInfo, queue string) string {
	if s.ID != "" {
		return "gateflow-schedule/" + flow + "/" + s.ID + "@" + queue
	}
	return protocol.ScheduleID(flow, n, queue)
}

// ScheduleInput sets the scheduled runs' input (encoded as JSON).
func ScheduleInput(v any) ScheduleOption {
	return func(s *ScheduleInfo) error {
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
func Overlap(policy OverlapPolicy) ScheduleOption {
	return func(s *ScheduleInfo) error {
		if _, err := overlapPolicy(policy); err != nil {
			return err
		}
		s.Overlap = policy
		return nil
	}
}

// SchedulePaused creates the schedule paused (flowctl schedules unpause starts it).
func SchedulePaused() ScheduleOption {
	return func(s *ScheduleInfo) error { s.Paused = true; return nil }
}

// Schedule runs the flow on a schedule: spec is a cron expression ("*/15 * * * *") or
// "@every 10m". An invalid expression is refused at Define (see Flow.Err). The worker that
// serves the flow creates or updates one Temporal Schedule per declared schedule when it
// starts, named by its position among the flow's schedules or by its ScheduleID;
// scheduled runs reserve their cap against the monthly quotas before any step.
func Schedule(spec string, opts ...ScheduleOption) Option {
	return func(i *WorkflowInfo) error {
		if _, err := cronspec.Parse(spec); err != nil {
			return fmt.Errorf("schedule %q: %v", spec, err)
		}
		s := ScheduleInfo{Spec: spec}
		for _, o := range opts {
			if err := o(&s); err != nil {
				return err
			}
		}
		if s.ID != "" && slices.ContainsFunc(i.Schedules, func(x ScheduleInfo) bool { return x.ID == s.ID }) {
			return fmt.Errorf("schedule %q: id %q is given to another schedule of the flow", spec, s.ID)
		}
		i.Schedules = append(i.Schedules, s)
		return nil
	}
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

func overlapPolicy(s OverlapPolicy) (enumspb.ScheduleOverlapPolicy, error) {
	p, ok := overlaps[s]
	if !ok {
		return 0, fmt.Errorf("overlap %q: want skip, buffer_one, buffer_all, cancel_other, terminate_other or allow_all", s)
	}
	return p, nil
}
