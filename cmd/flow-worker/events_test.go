package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/events"
)

func TestEventSubscriptionFlags(t *testing.T) {
	cfg, err := parse([]string{"--webhook", "http://127.0.0.1:1/hook", "--event-types", "approval.requested, step.retrying", "--event-flows", "ship,release"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, events.Subscription{Types: []events.Type{events.ApprovalRequested, events.StepRetrying}, Workflows: []string{"ship", "release"}}, cfg.eventsSub)

	_, err = parse([]string{"--event-types", "approval.asked"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid value "approval.asked" for flag -event-types: unknown event type "approval.asked"`)
}
