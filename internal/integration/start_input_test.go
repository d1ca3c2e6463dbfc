package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
)

// TestFlowctlRefusesEmptyRequiredInput: a start whose input leaves a required member
// empty (null for the whole input, "" or a blank string for a required string) is refused
// with exit 2 and one line naming the member, and starts nothing. (Issue 31: `flowctl
// start ship --input null`, `{"version":""}` and `{"version":"   "}` started runs.)
func TestFlowctlRefusesEmptyRequiredInput(t *testing.T) {
	const prefix = "flowctl: bad input for %s: payload does not match the schema: "
	cases := []struct{ input, want string }{
		{`null`, "at (root): want object, got null"},
		{`{"version":""}`, `at /version: want a non-blank string (not empty, not only spaces), got ""`},
		{`{"version":"   "}`, `at /version: want a non-blank string (not empty, not only spaces), got 3 white-space characters`},
		{`{"version":"\t\u00a0"}`, `at /version: want a non-blank string (not empty, not only spaces), got 2 white-space characters`},
	}
	for _, flowName := range []string{"ship", "release"} {
		for i, c := range cases {
			id := fmt.Sprintf("empty-input-%s-%d", flowName, i)
			r := flowctlRun(t, "", "start", flowName, "--input", c.input, "--id", id)
			assert.Equal(t, flowctl.ExitUsage, r.code, "%s %s: stderr %s", flowName, c.input, r.stderr)
			assert.Equal(t, fmt.Sprintf(prefix, flowName)+c.want+"\n", r.stderr, "%s %s", flowName, c.input)
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line")
			assert.Empty(t, r.stdout)
			_, err := shared.client.Describe(ctxT(t, 10*time.Second), id)
			var nf *flowclient.RunNotFoundError
			assert.ErrorAs(t, err, &nf, "%s %s: nothing was started", flowName, c.input)
		}
	}
}
