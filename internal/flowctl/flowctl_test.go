package flowctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/typeschema"
	"github.com/gateflow/gateflow/signals"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"usage error", usageErr("bad %s", "flag"), ExitUsage},
		{"explicit code", &exitError{code: ExitRunFailed, err: errors.New("run ended failed")}, ExitRunFailed},
		{"wrapped explicit code", fmt.Errorf("outer: %w", &exitError{code: ExitUnreachable, err: errors.New("x")}), ExitUnreachable},
		{"unknown workflow", &core.UnknownWorkflowError{Name: "x", TaskQueue: "q"}, ExitUsage},
		{"bad input", fmt.Errorf("start: %w", &core.InputError{Workflow: "x", Err: errors.New("bad")}), ExitUsage},
		{"run exists", &flowclient.RunExistsError{ID: "r"}, ExitUsage},
		{"run not found", fmt.Errorf("show: %w", &flowclient.RunNotFoundError{ID: "r"}), ExitNotFound},
		{"server unavailable", fmt.Errorf("list runs: %w", serviceerror.NewUnavailable("connection refused")), ExitUnreachable},
		{"deadline", fmt.Errorf("read catalog: %w", context.DeadlineExceeded), ExitUnreachable},
		{"not validated", fmt.Errorf("vote on ship on run r: %w: the run did not answer", core.ErrNotValidated), ExitPending},
		{"queued decision", &flowclient.PendingError{Run: "r", What: "vote on ship", Timeout: time.Second, Queued: true}, ExitPending},
		{"maybe queued decision", &flowclient.PendingError{Run: "r", What: "vote on ship", Timeout: time.Second}, ExitPending},
		{"decision not delivered", &flowclient.NotDeliveredError{Run: "r", What: "vote on ship", Timeout: time.Second}, ExitUnreachable},
		{"cobra unknown command", errors.New(`unknown command "nope" for "flowctl"`), ExitUsage},
		{"cobra arg count", errors.New("accepts 1 arg(s), received 2"), ExitUsage},
		{"cobra minimum args", errors.New("requires at least 1 arg(s), only received 0"), ExitUsage},
		{"no catalog", fmt.Errorf("task queue q: %w", core.ErrNoCatalog), ExitNotFound},
		{"unknown namespace", fmt.Errorf("list: %w", serviceerror.NewNamespaceNotFound("nope")), ExitNotFound},
		{"bad run ID", fmt.Errorf("vote: %w", &protocol.NameError{What: "run ID"}), ExitUsage},
		{"anything else", errors.New("boom"), ExitError},
		{"cancelled is not unreachable", context.Canceled, ExitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, classify(tt.err))
		})
	}
}

func TestReadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "in.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"name":"Ada"}`), 0o600))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"name":`), 0o600))
	empty := filepath.Join(dir, "empty.json")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))

	tests := []struct {
		name    string
		input   string
		stdin   string
		want    string
		wantErr string
	}{
		{"no input", "", "", "", ""},
		{"inline", `{"name":"Ada"}`, "", `{"name":"Ada"}`, ""},
		{"inline scalar", `42`, "", `42`, ""},
		{"file", "@" + good, "", `{"name":"Ada"}`, ""},
		{"stdin", "@-", " [1, 2]\n", " [1, 2]\n", ""},
		{"inline invalid", `{name:"Ada"}`, "", "", "--input is not valid JSON"},
		{"file invalid", "@" + bad, "", "", "--input is not valid JSON"},
		{"file empty", "@" + empty, "", "", "--input is not valid JSON"},
		{"file missing", "@" + filepath.Join(dir, "missing.json"), "", "", "read input file"},
		{"stdin invalid", "@-", "nope", "", "--input is not valid JSON"},
		{"blank inline", "  ", "", "", "--input is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &app{stdin: strings.NewReader(tt.stdin)}
			raw, err := a.readInput(tt.input)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Equal(t, ExitUsage, classify(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(raw))
		})
	}
}

func TestInputFields(t *testing.T) {
	type named struct {
		Tags   []string `json:"tags"`
		Name   string   `json:"name"`
		DryRun bool     `json:"dry_run"`
	}
	type parent struct {
		A named `json:"a"`
		B named `json:"b"`
	}
	tests := []struct {
		name   string
		schema json.RawMessage
		want   string
	}{
		{"none", nil, "any"},
		{"open", json.RawMessage(`{}`), "any"},
		{"not JSON", json.RawMessage(`{`), "any"},
		{"string", typeschema.For(reflect.TypeFor[string]()), "string"},
		{"array", typeschema.For(reflect.TypeFor[[]int]()), "array"},
		{"map", typeschema.For(reflect.TypeFor[map[string]string]()), "object"},
		{"empty struct", typeschema.For(reflect.TypeFor[struct{}]()), "{}"},
		{"struct fields sorted", typeschema.For(reflect.TypeFor[named]()), "{dry_run, name, tags}"},
		{"struct used twice", typeschema.For(reflect.TypeFor[parent]()), "{a, b}"},
		{"a reference to a definition", json.RawMessage(`{"$ref":"#/$defs/x","$defs":{"x":{"type":"object","properties":{"k":{}}}}}`), "{k}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, inputFields(tt.schema))
		})
	}
}

func TestFmtDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "-"},
		{0, "0s"},
		{1234567 * time.Nanosecond, "1ms"},
		{999 * time.Millisecond, "999ms"},
		{1260 * time.Millisecond, "1.3s"},
		{59*time.Second + 940*time.Millisecond, "59.9s"},
		{90*time.Second + 400*time.Millisecond, "1m30s"},
		{2*time.Hour + 3*time.Minute + 4*time.Second + 600*time.Millisecond, "2h3m5s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, fmtDuration(tt.d))
		})
	}
}

func TestExactArgs(t *testing.T) {
	cmd := &cobra.Command{Use: "show RUN"}
	check := exactArgs(1, "RUN")
	assert.NoError(t, check(cmd, []string{"r1"}))
	for _, args := range [][]string{nil, {"a", "b"}} {
		err := check(cmd, args)
		require.Error(t, err)
		assert.Equal(t, fmt.Sprintf("show needs RUN (got %d arguments); see flowctl show --help", len(args)), err.Error())
		assert.Equal(t, ExitUsage, classify(err))
	}
}

func TestHelpers(t *testing.T) {
	assert.Equal(t, "-", orDash(""))
	assert.Equal(t, "x", orDash("x"))
	assert.Equal(t, "-", fmtTime(time.Time{}))
	ts := time.Date(2025, 3, 4, 5, 6, 7, 0, time.Local)
	assert.Equal(t, "2025-03-04 05:06:07", fmtTime(ts))
	inner := errors.New("dial tcp: connection refused")
	assert.Equal(t, "dial tcp: connection refused", rootCause(fmt.Errorf("a: %w", fmt.Errorf("b: %w", inner))))

	t.Setenv("GF_TEST_ENV", "  ")
	assert.Equal(t, "def", envOr("GF_TEST_ENV", "def"), "blank counts as unset")
	t.Setenv("GF_TEST_ENV", " val ")
	assert.Equal(t, "val", envOr("GF_TEST_ENV", "def"))

	var buf bytes.Buffer
	tb := newTable(&buf, "A", "LONGER")
	tb.row("x\ty", "multi\nline")
	require.NoError(t, tb.flush())
	assert.Equal(t, "A    LONGER\nx y  multi line\n", buf.String())

	buf.Reset()
	require.NoError(t, printJSON(&buf, map[string]int{"a": 1}))
	assert.Equal(t, "{\n  \"a\": 1\n}\n", buf.String())
}

func TestPrintRun(t *testing.T) {
	start := time.Date(2025, 1, 1, 10, 0, 0, 0, time.Local)
	end := start.Add(90 * time.Second)
	stepEnd := start.Add(2 * time.Second)
	code := 3
	d := &runs.Description{
		ID: "release-1", Workflow: "release", Status: runs.StatusFailed, CreatedBy: "alice",
		StartTime: start, CloseTime: &end, Error: "step deploy:\nexit code 3",
		State: &runs.State{Steps: []runs.Step{
			{Name: "build", Kind: runs.KindShell, Status: runs.StepCompleted, Attempt: 1, StartedAt: start, EndedAt: &stepEnd, Output: "ok\n"},
			{Name: "deploy", Kind: runs.KindShell, Status: runs.StepFailed, Attempt: 2, StartedAt: stepEnd, EndedAt: &end, ExitCode: &code, Output: "hidden", Error: "exit code 3"},
		}},
	}
	var out bytes.Buffer
	a := &app{stdout: &out, output: "table"}
	require.NoError(t, a.print(a.runView(context.Background(), d)))
	text := out.String()
	for _, want := range []string{
		"Run       release-1\n",
		"Workflow  release\n",
		"Status    failed\n",
		"Started   2025-01-01 10:00:00 by alice (unverified)\n",
		"Ended     2025-01-01 10:01:30 (1m30s)\n",
		"Error     step deploy: exit code 3\n",
		"Cost      $0.0000\n",
		"STEP    KIND   STATUS     ATTEMPT  DURATION  COST  EXIT  DETAIL\n",
		"build   shell  completed  1        2s        -     -     ok\n",
		"deploy  shell  failed     2        1m28s     -     3     exit code 3\n",
	} {
		assert.Contains(t, text, want)
	}
	assert.NotContains(t, text, "hidden", "a failed step shows its error, not its output")
	assert.NotContains(t, text, "Result")

	out.Reset()
	require.NoError(t, a.print(a.runView(context.Background(), &runs.Description{ID: "r", Status: runs.StatusRunning, StateError: "query failed:\n timeout"})))
	assert.Contains(t, out.String(), "Steps unavailable: query failed: timeout\n")

	out.Reset()
	require.NoError(t, a.print(a.runView(context.Background(), &runs.Description{ID: "r", Result: json.RawMessage(`{"ok":true}`), State: &runs.State{}})))
	assert.Contains(t, out.String(), "Result    {\"ok\":true}\n")
	assert.Contains(t, out.String(), "No steps yet.\n")

	out.Reset()
	a.output = "json"
	require.NoError(t, a.print(a.runView(context.Background(), d)))
	var back runs.Description
	require.NoError(t, json.Unmarshal(out.Bytes(), &back))
	assert.Equal(t, "release-1", back.ID)
	assert.Len(t, back.State.Steps, 2)
}

func TestPrintWaiting(t *testing.T) {
	in, err := signals.NewInput("release-notes", signals.InputRequest{Prompt: "Release notes\nfor 2.0.0"}, time.Now())
	require.NoError(t, err)
	g, err := approval.Open("ship", approval.Request{Message: "Ship?", Approvers: []string{"group:release"}, Required: 2}, time.Now())
	require.NoError(t, err)
	st := &runs.State{ID: "ship-2.0.0", Waiting: []string{"approval:ship", "input:release-notes"},
		Gates: []*approval.Gate{g}, Inputs: []*signals.Input{in}}
	var out bytes.Buffer
	printWaiting(&out, st, plainHint)
	assert.Equal(t, "Waiting   approval:ship, input:release-notes\n"+
		"  approval ship: 0 of 2 from group:release, no deadline\n"+
		"    flowctl approve ship-2.0.0 ship\n"+
		"  input release-notes: Release notes for 2.0.0\n"+
		"    flowctl input ship-2.0.0 release-notes --data '{...}'\n", out.String())
}
