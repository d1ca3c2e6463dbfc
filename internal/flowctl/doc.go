// Package flowctl implements the flowctl command line: the operator's view of gateflow.
// cmd/flowctl is a thin main around Execute, so tests can run every command in process.
//
// One file per command group. Every command runs through one scaffold (scaffold.go: dial
// the client, resolve who acts, call, print) and hands what it got to one printer
// (printer.go) as a view: the value, and how to write it for people. The printer alone
// knows the formats of -o: a table or sentences for people; -o json, indented JSON for
// scripts; -o jsonl, compact JSON one object a line (a list one item a line; watch and logs
// stream one event a line in both). Durations are strings ("24h0m0s": jsondur.go, and
// DecodeJSON to read it back into Go types). The exit codes are the Exit constants; `flowctl --help`
// lists them with their meanings (exitCodes in root.go is the one list).
package flowctl
