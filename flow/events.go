package flow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.temporal.io/sdk/log"
)

// EventType names what happened in a run.
type EventType string

// Event types.
const (
	EventRunStatus         EventType = "run.status_changed"
	EventStepStarted       EventType = "step.started"
	EventStepCompleted     EventType = "step.completed"
	EventStepFailed        EventType = "step.failed"
	EventApprovalRequested EventType = "approval.requested"
	EventApprovalDecided   EventType = "approval.decided"
	EventInputRequested    EventType = "input.requested"
	EventInputReceived     EventType = "input.received"
	EventSignalAwaited     EventType = "signal.awaited"
	EventSignalReceived    EventType = "signal.received"
	EventBudgetWarning     EventType = "budget.warning"
	EventBudgetExceeded    EventType = "budget.exceeded"
)

// Event is one thing that happened in a run, delivered to the worker's EventSinks. ID is
// unique and stable (the same event always has the same ID), so a receiver can drop a
// redelivery.
type Event struct {
	ID       string         `json:"id"`
	Type     EventType      `json:"type"`
	Run      string         `json:"run"`
	Workflow string         `json:"workflow"`
	Step     string         `json:"step,omitempty"`
	Status   string         `json:"status,omitempty"`
	Message  string         `json:"message,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	At       time.Time      `json:"at"`
}

// EventSink receives events. Delivery runs as a Temporal activity, so a failed delivery is
// retried and a replay never delivers again.
type EventSink interface {
	Deliver(ctx context.Context, e Event) error
}

// WebhookSink POSTs each event as JSON to URL, with the event's ID in the Idempotency-Key
// header; any status other than 2xx is an error (and the delivery is retried).
type WebhookSink struct {
	URL     string
	Headers map[string]string
	Client  *http.Client
}

// Deliver implements EventSink.
func (s WebhookSink) Deliver(ctx context.Context, e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", s.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", e.ID)
	req.Header.Set("X-Gateflow-Event", string(e.Type))
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	hc := s.Client
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", s.URL, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook %s: status %s", s.URL, resp.Status)
	}
	return nil
}

// LogSink writes each event to a logger.
type LogSink struct{ Logger log.Logger }

// Deliver implements EventSink.
func (s LogSink) Deliver(_ context.Context, e Event) error {
	s.Logger.Info("gateflow event", "id", e.ID, "type", e.Type, "run", e.Run, "workflow", e.Workflow,
		"step", e.Step, "status", e.Status, "message", e.Message)
	return nil
}
