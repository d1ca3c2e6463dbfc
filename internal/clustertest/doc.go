// Package clustertest runs gateflow on a real cluster and injects faults: a PostgreSQL
// server (Debian's postgresql package, started by the tests with a data directory of its
// own on a loopback port), the Temporal server on it as a process of its own
// (internal/devserver/cluster/cmd/temporal-pg), several flow-worker processes pointed at
// it with --address (not --dev) and flowctl against it.
//
// The tests kill workers with SIGKILL in a loop, restart the Temporal server and
// PostgreSQL while runs wait on gates, and partition a worker with SIGSTOP for longer
// than the heartbeat timeout; each checks from the runs' histories and the side effects
// of their steps that nothing was lost and no completed step ran again.
//
// They are behind the build tag cluster, so `go test ./...` neither builds nor runs them:
// `make test-cluster` does (go test -tags cluster ./internal/clustertest), after building
// bin/. The package holds no code outside its tests.
package clustertest
