package flowctl

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// runCommands are commands that take a run ID, with RUN where it goes.
var runCommands = [][]string{
	{"show", "RUN"}, {"approve", "RUN", "go"}, {"reject", "RUN", "go"}, {"input", "RUN", "notes", "--data", "{}"},
	{"signal", "deploy-done", "--run", "RUN"}, {"cancel", "RUN"}, {"watch", "RUN"}, {"logs", "RUN", "build"},
	{"history", "RUN"}, {"audit", "RUN"}, {"budget", "raise", "RUN", "--to", "5"}, {"artifacts", "RUN"},
	{"artifacts", "get", "RUN", "build", "out"}, {"reset", "RUN", "--to-step", "build", "--reason", "x"},
	{"terminate", "RUN", "--reason", "x"}, {"query", "RUN"}, {"rerun", "RUN"},
}

// TestBadRunIDsAreRefusedBeforeAnythingIsSent: a run ID that is empty, blank, too long or
// not printable ASCII (emoji, control characters) exits 2 with one line naming it, for
// every command that takes a run, before flowctl dials the server (an unreachable
// address would exit 4). It used to reach the server and exit 1 with gRPC's raw
// "temporal-resource-id" header error.
func TestBadRunIDsAreRefusedBeforeAnythingIsSent(t *testing.T) {
	addr := closedAddress(t)
	ids := []string{"", "   ", "run-🚀", "run\x00", "a\nb", "tab\there", "caf\u00e9", "\u2028", strings.Repeat("r", 1001)}
	rng := rand.New(rand.NewPCG(12, 31))
	for i := 0; i < 20; i++ { // and random ones with a rune outside printable ASCII
		b := []rune("run-")
		b = append(b, rune(rng.IntN(0x20)))
		if i%2 == 1 {
			b[len(b)-1] = rune(0x7f + rng.IntN(0x10000))
		}
		if utf8.ValidString(string(b)) {
			ids = append(ids, string(b))
		}
	}
	for _, cmd := range runCommands {
		for _, id := range ids {
			args := []string{"--address", addr, "--connect-timeout", "1s"}
			for _, a := range cmd {
				if a == "RUN" {
					a = id
				}
				args = append(args, a)
			}
			code, stdout, stderr := run(t, "", args...)
			assert.Equal(t, ExitUsage, code, "%v %q: %s", cmd, id, stderr)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "%v %q: one line: %q", cmd, id, stderr)
			assert.Contains(t, stderr, "run ID ", "%v %q", cmd, id)
			assert.NotContains(t, stderr, "temporal-resource-id")
			assert.NotContains(t, stderr, "cannot reach", "%v %q: refused before dialling", cmd, id)
		}
	}
	code, _, stderr := run(t, "", "--address", addr, "--connect-timeout", "1s", "show", "ship-1a2b")
	assert.Equal(t, ExitUnreachable, code, "a good ID goes on to dial: %s", stderr)
}

// TestBadNamespaceOrTaskQueueNames: a namespace or task queue the gRPC header cannot
// carry exits 2 naming it, before dialling.
func TestBadNamespaceOrTaskQueueNames(t *testing.T) {
	addr := closedAddress(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--namespace", "ns-🚀", "list"}, `flowctl: namespace "ns-🚀" has U+1F680 at byte 3`},
		{[]string{"--namespace", " ", "list"}, `flowctl: namespace " " is blank`},
		{[]string{"--task-queue", "q\x01", "workflows"}, `flowctl: --task-queue: task queue "q\x01" has U+0001 at byte 1`},
		{[]string{"--task-queue", "", "workflows"}, `flowctl: --task-queue: task queue is empty`},
	} {
		code, _, stderr := run(t, "", append([]string{"--address", addr, "--connect-timeout", "1s"}, c.args...)...)
		assert.Equal(t, ExitUsage, code, "%v: %s", c.args, stderr)
		assert.True(t, strings.HasPrefix(stderr, c.want), "%v: %q", c.args, stderr)
	}
}
