package flowctl

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/gateflow/gateflow/runs"
)

func exitCodeOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return -1
}

func TestResetStepChoosesTheFirstAttempt(t *testing.T) {
	steps := []runs.Step{
		{Name: "build", ActivityID: "build"}, {Name: "test", ActivityID: "test"},
		{Name: "build", ActivityID: "build#2"},
		{Name: "deploy", ActivityID: "regions/eu/deploy", Branch: "regions/eu"},
		{Name: "deploy", ActivityID: "regions/us/deploy", Branch: "regions/us"},
	}
	s, err := resetStep("r", steps, "build")
	require.NoError(t, err)
	assert.Equal(t, "build", s.ActivityID, "the first attempt of a repeated step")
	s, err = resetStep("r", steps, "build#2")
	require.NoError(t, err)
	assert.Equal(t, "build#2", s.ActivityID, "an activity ID names one")
	s, err = resetStep("r", steps, "regions/us/deploy")
	require.NoError(t, err)
	assert.Equal(t, "regions/us", s.Branch)

	_, err = resetStep("r", steps, "deploy")
	assert.Equal(t, ExitUsage, exitCodeOf(err))
	assert.EqualError(t, err, `run r has a step "deploy" in 2 branches; say which with --to-step: regions/eu/deploy, regions/us/deploy`)
	_, err = resetStep("r", steps, "ship")
	assert.Equal(t, ExitNotFound, exitCodeOf(err))
	assert.EqualError(t, err, `run r has no step "ship" (a step it never started cannot be reset to); its steps: build, test, build#2, regions/eu/deploy, regions/us/deploy`)
	_, err = resetStep("r", append(steps, runs.Step{Name: "smoke", ActivityID: "smoke", Kind: runs.KindChild, Child: &runs.Child{ID: "r/smoke"}}), "smoke/boot")
	assert.Equal(t, ExitNotFound, exitCodeOf(err))
	assert.EqualError(t, err, `run r has no step "smoke/boot": boot is a step of its child run r/smoke; reset that run (--to-step boot), or this one to smoke`)
	_, err = resetStep("r", nil, "ship")
	assert.ErrorContains(t, err, "its steps: none yet")
}

func event(id int64, typ enumspb.EventType, at time.Time) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventId: id, EventType: typ, EventTime: timestamppb.New(at)}
}

func scheduled(id, wft int64, activity string) *historypb.HistoryEvent {
	ev := event(id, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, time.Time{})
	ev.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
		ActivityId: activity, WorkflowTaskCompletedEventId: wft}}
	return ev
}

func TestResetEventIDIsTheTaskThatBeganTheStep(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	events := []*historypb.HistoryEvent{
		event(1, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, t0),
		event(2, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, t0),
		event(3, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, t0),
		event(4, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, t0),
		scheduled(5, 4, "one"),
		scheduled(6, 4, "7"),
		event(8, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, t0.Add(time.Second)),
		event(9, enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, t0.Add(time.Second)),
		scheduled(10, 9, "wait#poll-1"),
		scheduled(11, 9, "two"),
	}
	for step, want := range map[string]int64{"one": 4, "two": 9, "wait": 9} {
		id, err := resetEventID("r", runs.Step{ActivityID: step}, events)
		require.NoError(t, err, step)
		assert.Equal(t, want, id, step)
	}
	id, err := resetEventID("r", runs.Step{ActivityID: "ship", Kind: runs.KindApproval, StartedAt: t0.Add(time.Second)}, events)
	require.NoError(t, err)
	assert.Equal(t, int64(9), id, "a step without an activity: the task that ran at its start time")
	_, err = resetEventID("r", runs.Step{ActivityID: "ship", Kind: runs.KindApproval, StartedAt: t0.Add(time.Hour)}, events)
	assert.Equal(t, ExitNotFound, exitCodeOf(err))
	assert.ErrorContains(t, err, "does not show where step ship began (it is of kind approval)")
}
