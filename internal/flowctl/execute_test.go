package flowctl

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closedAddress is a local address nothing listens on, so a command that dials fails fast.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestExecuteHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, "", args...)
			assert.Equal(t, ExitOK, code)
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "Exit codes:")
			for _, line := range []string{
				"0  success",
				"1  an error not listed below",
				"2  bad usage or bad input",
				"3  not found",
				"4  the Temporal server cannot be reached",
				"5  with start --wait or watch: the run ended but did not complete",
			} {
				assert.Contains(t, stdout, line)
			}
			for _, e := range exitCodes {
				first, _, _ := strings.Cut(e.meaning, "\n")
				assert.Contains(t, stdout, fmt.Sprintf("  %d  %s\n", e.code, first))
			}
			for _, cmd := range []string{"workflows", "start", "show", "list"} {
				assert.Contains(t, stdout, cmd)
			}
		})
	}
}

func TestExecuteSubcommandHelp(t *testing.T) {
	code, stdout, _ := run(t, "", "start", "--help")
	assert.Equal(t, ExitOK, code)
	assert.Contains(t, stdout, "@- reads standard input")
	assert.Contains(t, stdout, "--input")
}

// TestExecuteUsageErrors covers mistakes flowctl reports before it dials the server. The
// address points nowhere, so a command that dialled anyway would exit 4, not 2.
func TestExecuteUsageErrors(t *testing.T) {
	addr := closedAddress(t)
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantStderr string
	}{
		{"unknown command", "", []string{"frobnicate"}, `flowctl: unknown command "frobnicate" for "flowctl"`},
		{"unknown flag", "", []string{"list", "--bogus"}, "flowctl: unknown flag: --bogus"},
		{"bad flag value", "", []string{"list", "--limit", "many"}, `invalid argument "many" for "--limit"`},
		{"bad output", "", []string{"-o", "yaml", "workflows"}, `flowctl: --output "yaml": want table, json or jsonl`},
		{"start without workflow", "", []string{"start"}, "flowctl: start needs WORKFLOW (got 0 arguments); see flowctl start --help"},
		{"start a file and a workflow", "", []string{"start", "--file", "x.yaml", "hello"}, "flowctl: start --file takes no WORKFLOW argument (got hello)"},
		{"start a file once again", "", []string{"start", "--once-again", "--file", "x.yaml"}, "--file cannot be given with it"},
		{"show with two runs", "", []string{"show", "a", "b"}, "flowctl: show needs RUN (got 2 arguments)"},
		{"list with an argument", "", []string{"list", "extra"}, `flowctl: unknown command "extra" for "flowctl list"`},
		{"malformed inline input", "", []string{"start", "hello", "--input", "{bad"}, "flowctl: --input is not valid JSON"},
		{"malformed stdin input", "not json", []string{"start", "hello", "--input", "@-"}, "flowctl: --input is not valid JSON"},
		{"missing input file", "", []string{"start", "hello", "-i", "@/no/such/file.json"}, "flowctl: read input file"},
		{"bad status filter", "", []string{"list", "--status", "done"}, `flowctl: --status "done": want one of pending, running,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := run(t, tt.stdin, append([]string{"--address", addr, "--connect-timeout", "2s"}, tt.args...)...)
			assert.Equal(t, ExitUsage, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, tt.wantStderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "errors are one line: %q", stderr)
			assert.Less(t, time.Since(start), time.Second, "nothing was dialled")
		})
	}
}

func TestExecuteUnreachableServer(t *testing.T) {
	addr := closedAddress(t)
	for _, args := range [][]string{{"workflows"}, {"list"}, {"show", "r1"}, {"start", "hello", "--input", "{}"}} {
		t.Run(args[0], func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := run(t, "", append([]string{"--address", addr, "--connect-timeout", "300ms"}, args...)...)
			assert.Equal(t, ExitUnreachable, code, "stderr: %s", stderr)
			assert.Contains(t, stderr, "flowctl: cannot reach Temporal at "+addr)
			assert.Empty(t, stdout)
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

func TestExecuteReadsEnvironmentDefaults(t *testing.T) {
	addr := closedAddress(t)
	t.Setenv("TEMPORAL_ADDRESS", addr)
	code, _, stderr := run(t, "", "--connect-timeout", "300ms", "workflows")
	assert.Equal(t, ExitUnreachable, code)
	assert.Contains(t, stderr, "cannot reach Temporal at "+addr, "TEMPORAL_ADDRESS is the default address")
}

// TestExitCodesAreListedOnce checks the one exit code list: every code once, in order,
// each with a meaning, and the help text built from it.
func TestExitCodesAreListedOnce(t *testing.T) {
	want := []int{ExitOK, ExitError, ExitUsage, ExitNotFound, ExitUnreachable, ExitRunFailed, ExitRefused, ExitPending}
	var got []int
	for _, e := range exitCodes {
		got = append(got, e.code)
		assert.NotEmpty(t, e.meaning, "exit %d", e.code)
	}
	assert.Equal(t, want, got)
	help := exitCodesHelp()
	assert.True(t, strings.HasPrefix(help, "Exit codes:\n  0  success\n"), help)
	assert.Contains(t, help, " or a start\n     refused by an exhausted monthly quota", "a long meaning goes on indented")
}
