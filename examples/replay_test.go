package examples_test

import (
	"testing"

	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/testsuite"
)

// TestRecordedHistoriesReplay replays the recorded histories of every example flow
// (testdata/histories, recorded by internal/integration's
// TestExampleHistoriesRecordAndReplay with GATEFLOW_UPDATE_HISTORIES=1) against the code as
// it is: a change that would break running workflows fails here.
func TestRecordedHistoriesReplay(t *testing.T) {
	testsuite.ReplayDir(t, "testdata/histories", examples.All()...)
}
