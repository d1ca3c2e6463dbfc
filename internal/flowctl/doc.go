// Package flowctl implements the flowctl command line: the operator's view of gateflow.
// cmd/flowctl is a thin main around Execute, so tests can run every command in process.
//
// One file per command group; every command prints a table for people and, with
// -o json, JSON for scripts, whose durations are strings ("24h0m0s": jsondur.go, and
// DecodeJSON to read it back into Go types). The exit codes are the Exit constants; `flowctl --help`
// lists them with their meanings (exitCodes in root.go is the one list).
package flowctl
