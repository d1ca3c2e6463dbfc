package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/flowctl"
)

type result struct {
	code           int
	stdout, stderr string
}

// flowctlRun runs flowctl in process against the shared server and task queue.
func flowctlRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return flowctlRunIn(t, shared.queue, stdin, args...)
}

// sharedHint is the command flowctl suggests, as flowctlRun's invocations print it: with
// the shared server's address and task queue (flowctl adds the connection flags it used).
func sharedHint(cmd string) string {
	return "flowctl --address " + shared.srv.FrontendAddress() + " --task-queue " + shared.queue + " " + strings.TrimPrefix(cmd, "flowctl ")
}

// flowctlRunOn runs flowctl in process against the shared server on another task queue.
func flowctlRunOn(t *testing.T, queue string, args ...string) result {
	t.Helper()
	return flowctlRunIn(t, queue, "", args...)
}

func flowctlRunIn(t *testing.T, queue, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--address", shared.srv.FrontendAddress(), "--task-queue", queue}, args...)
	code := flowctl.Execute(full, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func TestFlowctlWorkflowsStartShowList(t *testing.T) {
	r := flowctlRun(t, "", "workflows")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^NAME\s+CATEGORY\s+VERSION\s+INPUT\s+DESCRIPTION`, r.stdout)
	assert.Regexp(t, `(?m)^hello\s+examples\s+1\s+\{name\}\s+Say hello with two shell steps`, r.stdout)

	r = flowctlRun(t, "", "workflows", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var cat core.Catalog
	require.NoError(t, flowctl.DecodeJSON([]byte(r.stdout), &cat))
	info, ok := cat.Lookup("hello")
	require.True(t, ok)
	assert.Equal(t, "github.com/gateflow/gateflow/examples.HelloInput", info.InputType)

	r = flowctlRun(t, "", "start", "hello", "--input", `{"name":"Grace"}`, "--id", "ctl-hello", "--wait")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Started hello run ctl-hello")
	assert.Regexp(t, `(?m)^Status\s+completed$`, r.stdout)
	assert.Regexp(t, `(?m)^greet\s+shell\s+completed\s+1\s+\S+\s+-\s+0\s+Hello, Grace!$`, r.stdout)
	assert.Regexp(t, `(?m)^shout\s+shell\s+completed\s+1\s+\S+\s+-\s+0\s+HELLO, GRACE!$`, r.stdout)

	r = flowctlRun(t, "", "show", "ctl-hello", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var d runs.Description
	require.NoError(t, flowctl.DecodeJSON([]byte(r.stdout), &d))
	assert.Equal(t, runs.StatusCompleted, d.Status)
	require.NotNil(t, d.State)
	assert.Len(t, d.State.Steps, 2)
	assert.JSONEq(t, `{"greeting":"Hello, Grace!","shouted":"HELLO, GRACE!"}`, string(d.Result))

	r = flowctlRun(t, "", "show", "ctl-hello")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `(?m)^Run\s+ctl-hello$`, r.stdout)
	assert.Contains(t, r.stdout, `Result    {"greeting":"Hello, Grace!","shouted":"HELLO, GRACE!"}`)

	// Input from a file, started without waiting.
	file := filepath.Join(t.TempDir(), "in.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name":"File"}`), 0o600))
	r = flowctlRun(t, "", "start", "hello", "--input", "@"+file, "--id", "ctl-file", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var run core.Run
	require.NoError(t, flowctl.DecodeJSON([]byte(r.stdout), &run))
	assert.Equal(t, "ctl-file", run.ID)
	_, err := shared.client.Wait(ctxT(t, time.Minute), "ctl-file")
	require.NoError(t, err)

	// Input from standard input.
	r = flowctlRun(t, `{"name":"Stdin"}`, "start", "hello", "--input", "@-", "--id", "ctl-stdin", "--wait", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, flowctl.DecodeJSON([]byte(r.stdout), &d))
	assert.JSONEq(t, `{"greeting":"Hello, Stdin!","shouted":"HELLO, STDIN!"}`, string(d.Result))

	require.Eventually(t, func() bool {
		r = flowctlRun(t, "", "list", "--workflow", "hello", "--limit", "100")
		return r.code == 0 && strings.Contains(r.stdout, "ctl-hello") && strings.Contains(r.stdout, "ctl-file")
	}, 10*time.Second, 100*time.Millisecond, "list shows the runs: %s %s", r.stdout, r.stderr)
	assert.Regexp(t, `(?m)^RUN\s+WORKFLOW\s+STATUS\s+STARTED\s+DURATION\s+BY`, r.stdout)
	assert.Regexp(t, `(?m)^ctl-hello\s+hello\s+completed\s`, r.stdout)

	r = flowctlRun(t, "", "list", "--workflow", "hello", "--limit", "100", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var found []runs.Summary
	require.NoError(t, flowctl.DecodeJSON([]byte(r.stdout), &found))
	assert.NotEmpty(t, found)
	for _, s := range found {
		assert.Equal(t, "hello", s.Workflow)
	}
}

func TestFlowctlStartWaitOnAFailingRunExits5(t *testing.T) {
	r := flowctlRun(t, "", "start", "test.failing", "--wait")
	assert.Equal(t, flowctl.ExitRunFailed, r.code)
	assert.Regexp(t, `(?m)^explode\s+shell\s+failed\s+1\s+\S+\s+-\s+3\s+exit code 3: disk full`, r.stdout)
	assert.Regexp(t, `^flowctl: run test\.failing-[0-9a-f]+ ended failed\n$`, r.stderr)
}

// Each refused command prints one line on stderr, exits with its code and starts nothing.
func TestFlowctlBadInput(t *testing.T) {
	unreachable := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
		id     string // a run that must not exist afterwards
	}{
		{"malformed JSON", []string{"start", "hello", "--input", `{"name":`, "--id", "bad-json"},
			flowctl.ExitUsage, "flowctl: --input is not valid JSON: unexpected end of JSON input", "bad-json"},
		{"unknown workflow", []string{"start", "nope", "--id", "bad-wf"},
			flowctl.ExitUsage, `flowctl: unknown workflow "nope" on task queue integration (known: hello, release, rollout, ship, smoke, test.agents,`, "bad-wf"},
		{"input of the wrong shape", []string{"start", "hello", "--input", `{"nmae":"x"}`, "--id", "bad-field"},
			flowctl.ExitUsage, `flowctl: bad input for hello: payload does not match the schema: at (root): property "nmae" not allowed`, "bad-field"},
		{"input of the wrong type", []string{"start", "hello", "--input", `{"name":42}`, "--id", "bad-type"},
			flowctl.ExitUsage, `flowctl: bad input for hello: payload does not match the schema: at /name: want null or string, got number`, "bad-type"},
		{"missing input file", []string{"start", "hello", "--input", "@/nonexistent/in.json", "--id", "bad-file"},
			flowctl.ExitUsage, "flowctl: read input file: open /nonexistent/in.json: no such file or directory", "bad-file"},
		{"unknown run", []string{"show", "no-such-run"},
			flowctl.ExitNotFound, "flowctl: run no-such-run not found", ""},
		{"server not reachable", []string{"--address", unreachable, "--connect-timeout", "2s", "start", "hello", "--id", "bad-conn"},
			flowctl.ExitUnreachable, "flowctl: cannot reach Temporal at " + unreachable, "bad-conn"},
		{"missing argument", []string{"show"},
			flowctl.ExitUsage, "flowctl: show needs RUN (got 0 arguments); see flowctl show --help", ""},
		{"unknown flag", []string{"list", "--bogus"},
			flowctl.ExitUsage, "flowctl: unknown flag: --bogus", ""},
		{"bad output format", []string{"list", "-o", "yaml"},
			flowctl.ExitUsage, `flowctl: --output "yaml": want table, json or jsonl`, ""},
		{"unknown status", []string{"list", "--status", "done"},
			flowctl.ExitUsage, `flowctl: --status "done": want one of pending, running`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := flowctlRun(t, "", tc.args...)
			assert.Equal(t, tc.code, r.code, "stderr: %s", r.stderr)
			assert.True(t, strings.HasPrefix(r.stderr, tc.stderr), "stderr %q should start with %q", r.stderr, tc.stderr)
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line on stderr: %q", r.stderr)
			assert.Empty(t, r.stdout)
			if tc.id != "" {
				_, err := shared.client.Describe(ctxT(t, 10*time.Second), tc.id)
				var nf *flowclient.RunNotFoundError
				assert.ErrorAs(t, err, &nf, "nothing was started")
			}
		})
	}
}
