package interp_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/runs"
	"github.com/gateflow/gateflow/testsuite"
)

// max_loop_time stops the loop before a turn once that much workflow time has passed: the
// lookup's first attempt asks to be retried in 11 minutes, so the second turn would start
// past the 10 minutes. With on_limit: answer that turn is the answer turn; without, the
// step fails naming the limit.
func TestAgentLoopMaxLoopTime(t *testing.T) {
	for _, onLimit := range []string{"answer", "fail"} {
		t.Run(onLimit, func(t *testing.T) {
			var attempts atomic.Int32
			slowLookup := func(ctx context.Context, in hostArgs) (string, error) {
				if attempts.Add(1) == 1 {
					return "", temporal.NewApplicationErrorWithOptions("busy", "Busy",
						temporal.ApplicationErrorOptions{NextRetryDelay: 11 * time.Minute})
				}
				return lookupAction(ctx, in)
			}
			r := run(t, `
name: timed
steps:
  - id: triage
    uses: agent
    with:
      prompt: "look it up"
      max_loop_time: 10m
      on_limit: `+onLimit+`
      tools: [{action: lookup}]
`, nil, func(e *testsuite.Env) {
				e.RegisterActivity(slowLookup, "lookup")
				e.ScriptAgent(
					llm.ScriptRule{Match: "time limit", Text: "probably up"},
					llm.ScriptRule{ToolCalls: []llm.ToolCall{{Name: "lookup", Arguments: json.RawMessage(`{"host":"1"}`)}}},
				)
			})
			assert.EqualValues(t, 2, attempts.Load())
			st, ok := r.Step("triage")
			require.True(t, ok)
			if onLimit == "fail" {
				require.Error(t, r.Err)
				assert.Equal(t, []string{"triage", "triage/turn-1", "triage/lookup"}, activityIDs(r))
				assert.Equal(t, runs.StepFailed, st.Status)
				assert.Contains(t, st.Error, "agent: time limit reached after 1 turns")
				return
			}
			require.NoError(t, r.Err)
			assert.Equal(t, []string{"triage", "triage/turn-1", "triage/lookup", "triage/turn-2"}, activityIDs(r))
			assert.Equal(t, "probably up", st.Output)
		})
	}
}
