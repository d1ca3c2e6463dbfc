// Command flowvet checks that gateflow flow handlers keep Temporal's determinism rules:
// no goroutines, select statements, native channels, map ranging, wall clock, timers,
// randomness or client calls in a function whose first parameter is *flow.Context, nor in
// the same-package functions it calls. The check is the analyzer in
// github.com/gateflow/gateflow/analyzer; see its documentation for the full list and for
// the //flowvet:ignore comment.
//
// Run it on packages directly:
//
//	go run ./cmd/flowvet ./...
//
// or through go vet:
//
//	go build -o bin/flowvet ./cmd/flowvet
//	go vet -vettool=$(pwd)/bin/flowvet ./...
//
// It exits non-zero when it reports a finding.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/gateflow/gateflow/analyzer"
)

func main() { singlechecker.Main(analyzer.Analyzer) }
