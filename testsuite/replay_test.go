package testsuite_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/testsuite"
)

const helloHistory = "../examples/testdata/histories/hello.json"

func TestReplayOfTheRecordedHelloPasses(t *testing.T) {
	require.NoError(t, testsuite.Replay(helloHistory, flow.WorkerOptions{}, examples.Hello))
}

// A deliberately non-deterministic change to the hello example (its steps swapped) is
// caught by replaying the recorded history; the real example is unchanged, so the replay of
// the examples in make test still passes.
func TestReplayCatchesANonDeterministicChange(t *testing.T) {
	changed := flow.Define("hello", func(ctx *flow.Context, in examples.HelloInput) (examples.HelloOutput, error) {
		if _, err := ctx.Shell("shout", activities.Shell{Command: "true"}); err != nil {
			return examples.HelloOutput{}, err
		}
		_, err := ctx.Shell("greet", activities.Shell{Command: "true"})
		return examples.HelloOutput{}, err
	}, flow.Version("1"))
	err := testsuite.Replay(helloHistory, flow.WorkerOptions{}, changed)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "nondeterministic") || strings.Contains(err.Error(), "TMPRL1100"), err.Error())
}

func TestReplayOfAMissingFileFails(t *testing.T) {
	err := testsuite.Replay("testdata/none.json", flow.WorkerOptions{}, examples.Hello)
	require.Error(t, err)
}
