package flowctl

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/internal/searchattr"
)

func TestNewSetupResult(t *testing.T) {
	res := newSetupResult("prod", []string{"FlowWaiting", "FlowCostUSD"})
	assert.Equal(t, "prod", res.Namespace)
	assert.Equal(t, []string{"FlowCostUSD", "FlowWaiting"}, res.Added)
	assert.Equal(t, []string{"FlowCategory", "FlowCreatedBy", "FlowLabels", "FlowMaxCostUSD", "FlowPriority",
		"FlowStatus", "FlowVersion"}, res.Present)

	res = newSetupResult("default", nil)
	assert.Equal(t, []string{}, res.Added, "JSON prints [] rather than null")
	assert.Len(t, res.Present, len(searchattr.All()))
}

func TestSetupAndHistoryNeedTheServer(t *testing.T) {
	addr := closedAddress(t)
	for _, args := range [][]string{{"setup"}, {"history", "r1"}} {
		code, stdout, stderr := run(t, "", append([]string{"--address", addr, "--connect-timeout", "300ms"}, args...)...)
		assert.Equal(t, ExitUnreachable, code, stderr)
		assert.Empty(t, stdout)
	}
	code, _, stderr := run(t, "", "setup", "extra")
	assert.Equal(t, ExitUsage, code, stderr)
	code, _, stderr = run(t, "", "history")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "history needs RUN")
}

func TestCountEvents(t *testing.T) {
	assert.Equal(t, 2, countEvents([]byte(`{"events":[{"eventId":"1"},{"eventId":"2"}],"gateflowWorkflowId":"x"}`)))
	assert.Equal(t, 0, countEvents([]byte(`nope`)))
}

func TestHelpListsTheOpsCommandsAndExitCodes(t *testing.T) {
	code, stdout, _ := run(t, "", "--help")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, stdout, "Exit codes:")
	assert.Contains(t, stdout, "3  not found")
	for _, cmd := range []string{"watch", "history", "setup", "completion"} {
		assert.Regexp(t, `(?m)^  `+cmd+`\s+\S`, stdout)
	}
}
