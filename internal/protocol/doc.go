// Package protocol holds the wire contract between gateflow's run wrapper (package flow),
// its entity workflows (package internal/entity), its client and its tools: the names of
// workflow types, signals, updates, queries, memo keys and activities, the IDs of entity
// workflows, and the payloads they carry.
//
// Every string here is recorded in Temporal histories and read by running workflows:
// changing a value breaks runs in progress and the recorded histories under
// examples/testdata/histories. Add names; never rename one.
//
// The few names that tools in other languages send to runs (votes, answers, signals,
// budget raises, the state query and memo) are re-exported by flow/protocol.go, which is
// the public description of talking to a run without Go.
package protocol
