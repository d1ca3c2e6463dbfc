// Package flowctl implements the flowctl command line: the operator's view of gateflow.
// cmd/flowctl is a thin main around Execute, so tests can run every command in process.
//
// One file per command group; every command prints a table for people and, with
// -o json, JSON for scripts. Exit codes (also in `flowctl --help`):
//
//	0  success
//	1  an error not listed below (including a run that could not be read)
//	2  bad usage or bad input: unknown flag, malformed JSON, unknown workflow, bad input
//	3  not found: the run does not exist
//	4  the Temporal server cannot be reached
//	5  with start --wait or watch: the run ended but did not complete (failed, rejected, ...)
//	6  the run refused a vote, an answer or a signal
package flowctl
