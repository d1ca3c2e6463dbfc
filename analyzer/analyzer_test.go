package analyzer_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/gateflow/gateflow/analyzer"
)

// TestAnalyzer checks the fixtures under testdata/src: bad's findings are its // want
// comments, good must produce none, and the flow stub (the runtime) is not checked.
func TestAnalyzer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Analyzer,
		"bad", "good", "github.com/gateflow/gateflow/flow")
}

// TestAnalyzerIsValid checks the analyzer's declaration.
func TestAnalyzerIsValid(t *testing.T) {
	if err := analysis.Validate([]*analysis.Analyzer{analyzer.Analyzer}); err != nil {
		t.Fatal(err)
	}
	if analyzer.Analyzer.Name != "flowdeterminism" {
		t.Fatalf("name %q", analyzer.Analyzer.Name)
	}
}
