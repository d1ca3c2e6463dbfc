package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/internal/flowctl"
)

// TestFlowctlUnknownNamespaceQueueAndBadRunIDs: against a real server, an unknown
// namespace or a task queue no worker serves exits 3 with one line saying which; a run ID
// that is empty or not printable ASCII (emoji, control characters) given to input or
// signal exits 2 naming it. They used to exit 1 with a raw gRPC error (the
// "temporal-resource-id" header, NamespaceNotFound). (Issue 31.)
func TestFlowctlUnknownNamespaceQueueAndBadRunIDs(t *testing.T) {
	addr := shared.srv.FrontendAddress()
	nsLine := `flowctl: namespace "no-such-namespace" not found on the Temporal server at ` + addr +
		" (it comes from --namespace, TEMPORAL_NAMESPACE or the profile; `temporal operator namespace list` lists the server's)\n"
	for _, args := range [][]string{
		{"list"}, {"show", "some-run"}, {"approve", "some-run", "go", "--as", "alice"},
		{"signal", "deploy-done", "--run", "some-run"},
	} {
		r := flowctlRun(t, "", append([]string{"--namespace", "no-such-namespace"}, args...)...)
		assert.Equal(t, flowctl.ExitNotFound, r.code, "%v: %s", args, r.stderr)
		assert.Equal(t, nsLine, r.stderr, "%v", args)
	}

	for _, c := range []struct {
		args   []string
		prefix string
	}{
		{[]string{"workflows"}, ""}, {[]string{"start", "hello", "--id", "no-queue-run"}, "start hello: "},
	} {
		r := flowctlRunOn(t, "no-such-queue", c.args...)
		assert.Equal(t, flowctl.ExitNotFound, r.code, "%v: %s", c.args, r.stderr)
		assert.Equal(t, "flowctl: "+c.prefix+"task queue no-such-queue: no worker has published a catalog on this task queue (is flow-worker running with the same --task-queue?)\n", r.stderr, "%v", c.args)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"input", "run-🚀", "notes", "--data", `{}`}, `flowctl: run ID "run-🚀" has U+1F680 at byte 4: use printable ASCII only (letters, digits, punctuation, spaces)` + "\n"},
		{[]string{"input", "run\x07", "notes", "--data", `{}`}, `flowctl: run ID "run\a" has U+0007 at byte 3: use printable ASCII only (letters, digits, punctuation, spaces)` + "\n"},
		{[]string{"input", "", "notes", "--data", `{}`}, "flowctl: run ID is empty\n"},
		{[]string{"signal", "deploy-done", "--run", "🚀"}, `flowctl: --run: run ID "🚀" has U+1F680 at byte 0: use printable ASCII only (letters, digits, punctuation, spaces)` + "\n"},
		{[]string{"signal", "deploy-done", "--run", ""}, "flowctl: --run: run ID is empty\n"},
	} {
		r := flowctlRun(t, "", c.args...)
		assert.Equal(t, flowctl.ExitUsage, r.code, "%q: %s", c.args, r.stderr)
		assert.Equal(t, c.want, r.stderr, "%q", c.args)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"))
	}
}
