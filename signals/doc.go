// Package signals owns the data and rules behind gateflow's waits for the outside world:
// human input requests, signals and the mailbox that routes keyed signals.
//
// It is pure logic. Nothing here imports Temporal, reads a clock, does I/O or iterates a
// map in an order that shows, so workflow code may call any of it; every time is passed
// in. The flow package wires it onto Temporal: the Update "gateflow.input" (whose
// Validator calls Input.Check), the Signal "gateflow.signal" carrying an Envelope, and
// the mailbox entity workflow whose state is a Mailbox.
//
// What the package owns:
//
//   - Envelope, the wire form of one signal {name, key, id, payload, sender}, and its
//     validation rules (NewID gives senders a deterministic id).
//   - InputRequest, InputAnswer and Input: what a human input step asks, who may answer,
//     and the checks an answer must pass (identity, assignee, open, JSON Schema). Every
//     refusal is an *AnswerError with a stable Code.
//   - Schema: JSON Schema compilation (draft 2020-12 unless the schema names another
//     draft) and validation with short messages that name the JSON pointer, e.g.
//     "at /age: want integer, got string". Schemas must be self-contained: a $ref to
//     another document is refused, so compiling never touches the network or the disk.
//   - Buffer: the signals a run has received but not yet consumed. It keeps signals that
//     arrive before the run waits for them and delivers a repeated id once.
//   - Mailbox: the state of the entity workflow for one (name, key). It keeps signals for
//     a retention window, delivers each to every subscribed run once and hands kept
//     signals to runs that start waiting later. MailboxID names that workflow.
//
// Buffer and Mailbox serialise to JSON so they can be carried over continue-as-new.
package signals
