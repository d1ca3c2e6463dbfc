// Package integration holds gateflow's integration and end-to-end tests. They run against a
// real Temporal server embedded with internal/devserver, started by the tests themselves;
// shell steps run real processes. It is the one test package that links the server, so
// `go test ./...` links it once.
package integration
