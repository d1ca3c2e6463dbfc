// Package cluster runs gateflow's Temporal server on PostgreSQL: the postgres12
// persistence and visibility plugins of go.temporal.io/server on two databases of a real
// PostgreSQL server, their schema created from the server module's own embedded schema
// files, the namespace and gateflow's search attributes registered as the dev server does
// (package devserver does the rest). It is the cluster tests' server (cmd/temporal-pg runs
// it as a process of its own, so the tests can kill and restart it); a production cluster
// runs Temporal's own images (docker-compose.yml).
package cluster
