package signals_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gateflow/gateflow/signals"
)

func ExampleCompileSchema() {
	schema, err := signals.CompileSchema(json.RawMessage(`{
		"type": "object",
		"required": ["name"],
		"properties": {"name": {"type": "string"}, "age": {"type": "integer"}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(schema.Validate(json.RawMessage(`{"name": "Ada", "age": 36}`)))

	err = schema.Validate(json.RawMessage(`{"age": "36"}`))
	var se *signals.SchemaError
	if errors.As(err, &se) {
		for _, msg := range se.Errors {
			fmt.Println(msg)
		}
	}

	_, err = signals.CompileSchema(json.RawMessage(`{"$ref": "https://example.com/person.json"}`))
	fmt.Println(err)
	// Output:
	// <nil>
	// at (root): missing property "name"
	// at /age: want integer, got string
	// signals: schema refers to "https://example.com/person.json": only references inside the schema are allowed (e.g. "#/$defs/name")
}

func ExampleBuffer() {
	var buf signals.Buffer // carried in the run's state

	// Signals arrive before the run waits for them; the sender retries one.
	buf.Add(signals.Envelope{Name: "deploy-done", Key: "v1.2.3", ID: "evt-1", Payload: json.RawMessage(`{"ok":true}`), Sender: "ci"})
	fmt.Println(buf.Add(signals.Envelope{Name: "deploy-done", Key: "v1.2.3", ID: "evt-1", Sender: "ci"}))
	buf.Add(signals.Envelope{Name: "deploy-done", Key: "v1.2.4", ID: "evt-2", Sender: "ci"})

	// Later the run waits on (deploy-done, v1.2.3).
	e, ok := buf.Take("deploy-done", "v1.2.3")
	fmt.Println(ok, e.ID, string(e.Payload))
	_, ok = buf.Take("deploy-done", "v1.2.3")
	fmt.Println(ok, buf.Len())
	// Output:
	// false
	// true evt-1 {"ok":true}
	// false 1
}

func ExampleMailbox() {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	m := signals.NewMailbox("deploy-done", "v1.2.3", time.Hour)
	fmt.Println(signals.MailboxID(m.Name, m.Key))

	m.Subscribe("run-1", time.Time{}, now)
	e := signals.Envelope{Name: "deploy-done", Key: "v1.2.3", ID: "evt-1", Sender: "ci"}
	m.Post(e, now)
	for _, run := range m.Deliveries(e) {
		// ... SignalExternalWorkflow(run, ...) succeeded:
		m.MarkDelivered(run, e.ID)
		fmt.Println("sent to", run)
	}
	// A run that starts waiting 10 minutes later still gets it.
	for _, got := range m.Subscribe("run-2", time.Time{}, now.Add(10*time.Minute)) {
		fmt.Println("run-2 gets", got.ID)
	}
	fmt.Println(m.Idle(now.Add(2 * time.Hour)))
	// Output:
	// gateflow-mailbox/deploy-done/v1.2.3
	// sent to run-1
	// run-2 gets evt-1
	// false
}
