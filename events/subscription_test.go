package events

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type recordSink struct{ got []Event }

func (s *recordSink) Deliver(_ context.Context, e Event) error {
	s.got = append(s.got, e)
	return nil
}

func TestSubscriptionWantsChosenTypesAndWorkflows(t *testing.T) {
	all := Subscription{}
	assert.True(t, all.Wants("ship", StepStarted))
	assert.True(t, all.Wants("ship", ""))

	sub := Subscription{Types: []Type{ApprovalRequested, StepRetrying}, Workflows: []string{"ship"}}
	assert.True(t, sub.Wants("ship", ApprovalRequested))
	assert.True(t, sub.Wants("ship", ""), "some event of ship")
	assert.False(t, sub.Wants("ship", StepStarted))
	assert.False(t, sub.Wants("hello", ApprovalRequested))
	assert.False(t, sub.Wants("hello", ""))
}

func TestSubscribedDeliversOnlyWhatItWants(t *testing.T) {
	rec := &recordSink{}
	s := Subscribe(rec, Subscription{Types: []Type{StepFailed}})
	require.NoError(t, s.Deliver(context.Background(), Event{ID: "1", Type: StepStarted, Workflow: "w"}))
	require.NoError(t, s.Deliver(context.Background(), Event{ID: "2", Type: StepFailed, Workflow: "w"}))
	require.Len(t, rec.got, 1)
	assert.Equal(t, "2", rec.got[0].ID)

	assert.True(t, Wants(rec, "w", StepStarted), "a plain sink wants everything")
	assert.False(t, Wants(s, "w", StepStarted))
	assert.True(t, Wants(s, "w", StepFailed))
	nested := Subscribe(s, Subscription{Workflows: []string{"v"}})
	assert.False(t, Wants(nested, "v", StepStarted), "both subscriptions must want it")
	assert.False(t, Wants(nested, "w", StepFailed))
	assert.True(t, Wants(nested, "v", StepFailed))
}

func TestCheckNamesTheBadSink(t *testing.T) {
	assert.NoError(t, Check([]Sink{&recordSink{}, Subscribe(&recordSink{}, Subscription{Types: []Type{BudgetWarning}})}))
	err := Check([]Sink{&recordSink{}, Subscribe(&recordSink{}, Subscription{Types: []Type{"step.done"}})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `event sink 1: subscription: unknown event type "step.done"`)
	assert.ErrorContains(t, Check([]Sink{nil}), "event sink 0 is nil")
	assert.ErrorContains(t, Check([]Sink{Subscribed{}}), "event sink 0: Subscribed without a sink")
	assert.ErrorContains(t, Check([]Sink{Subscribe(&recordSink{}, Subscription{Workflows: []string{""}})}), "an empty workflow name")
}

func TestParseTypes(t *testing.T) {
	got, err := ParseTypes(" step.failed, approval.requested,,")
	require.NoError(t, err)
	assert.Equal(t, []Type{StepFailed, ApprovalRequested}, got)
	_, err = ParseTypes("step.failed,step.done")
	assert.ErrorContains(t, err, `unknown event type "step.done"`)
}
