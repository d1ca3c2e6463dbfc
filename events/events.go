package events

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

// Type names what happened in a run.
type Type string

// Event types.
const (
	RunStatus     Type = "run.status_changed"
	StepStarted   Type = "step.started"
	StepCompleted Type = "step.completed"
	StepFailed    Type = "step.failed"
	// StepRetrying: a step attempt failed and another attempt will be made. Data has
	// "attempt" (the failed one), "next_attempt", "next_delay" (a Go duration string) and
	// "next_delay_ms"; Message is the attempt's error.
	StepRetrying      Type = "step.retrying"
	ApprovalRequested Type = "approval.requested"
	ApprovalDecided   Type = "approval.decided"
	InputRequested    Type = "input.requested"
	InputReceived     Type = "input.received"
	SignalAwaited     Type = "signal.awaited"
	SignalReceived    Type = "signal.received"
	BudgetWarning     Type = "budget.warning"
	BudgetExceeded    Type = "budget.exceeded"
)

// Event is one thing that happened in a run, delivered to the worker's sinks. ID is
// unique and stable (the same event always has the same ID), so a receiver can drop a
// redelivery.
type Event struct {
	ID       string         `json:"id"`
	Type     Type           `json:"type"`
	Run      string         `json:"run"`
	Workflow string         `json:"workflow"`
	Step     string         `json:"step,omitempty"`
	Status   string         `json:"status,omitempty"`
	Message  string         `json:"message,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	At       time.Time      `json:"at"`
}

// Sink receives events. The worker delivers to each sink on its own (one failing sink
// never holds up another), retries a failed delivery a few times for that sink only, and
// then logs and counts it (gateflow_event_delivery_failures_total) and goes on: a sink
// never fails or stops a run. A replay never delivers again.
type Sink interface {
	Deliver(ctx context.Context, e Event) error
}

// Webhook POSTs each event as JSON to URL, with the event's ID in the Idempotency-Key
// header; any status other than 2xx is an error (and the delivery is retried).
type Webhook struct {
	URL     string
	Headers map[string]string
	Client  *http.Client
}

// Deliver implements Sink.
func (s Webhook) Deliver(ctx context.Context, e Event) error {
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

// Log writes each event to a logger.
type Log struct{ Logger log.Logger }

// Deliver implements Sink.
func (s Log) Deliver(_ context.Context, e Event) error {
	s.Logger.Info("gateflow event", "id", e.ID, "type", e.Type, "run", e.Run, "workflow", e.Workflow,
		"step", e.Step, "status", e.Status, "message", e.Message)
	return nil
}
