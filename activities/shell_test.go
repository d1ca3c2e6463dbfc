package activities

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/protobuf/proto"
)

func TestShellValidate(t *testing.T) {
	tests := []struct {
		name    string
		in      Shell
		wantErr string
	}{
		{"plain command", Shell{Command: "true"}, ""},
		{"all fields", Shell{Command: "make", Dir: "/tmp", Env: map[string]string{"A": "1"}, Timeout: time.Minute}, ""},
		{"empty command", Shell{}, "shell: command is empty"},
		{"blank command", Shell{Command: " \t\n"}, "shell: command is empty"},
		{"negative timeout", Shell{Command: "true", Timeout: -time.Second}, "shell: timeout -1s is negative"},
		{"empty env name", Shell{Command: "true", Env: map[string]string{"": "x"}}, `shell: environment variable name "" is invalid`},
		{"env name with =", Shell{Command: "true", Env: map[string]string{"A=B": "x"}}, `shell: environment variable name "A=B" is invalid`},
		{"env name with NUL", Shell{Command: "true", Env: map[string]string{"A\x00": "x"}}, `shell: environment variable name "A\x00" is invalid`},
		{"empty env value is fine", Shell{Command: "true", Env: map[string]string{"A": ""}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertValidation(t, tt.in.Validate(), tt.wantErr) })
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short string kept", "hello", 10, "hello"},
		{"exactly n", "hello", 5, "hello"},
		{"trimmed before measuring", "  hello\n\n", 5, "hello"},
		{"cut from the end", "abcdefghij", 4, "…ghij"},
		{"starts after a near newline", "aaaaaaaaaa\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 32, "…bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
		{"far newline is not used", strings.Repeat("a", 30) + "\n" + strings.Repeat("b", 10), 24, "…" + strings.Repeat("a", 13) + "\n" + strings.Repeat("b", 10)},
		{"empty", "", 10, ""},
		{"only space", " \n\t ", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Tail(tt.s, tt.n))
		})
	}
}

// TestTailKeepsUTF8Valid fails today: Tail cuts at a byte offset, so with multi-byte
// characters near the cut it returns invalid UTF-8 (see the report). The tail ends up in
// the message of the step's ApplicationError, which is a protobuf string.
func TestTailKeepsUTF8Valid(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
	}{
		{"two-byte runes, odd cut", strings.Repeat("é", 100) + "x", 50},
		{"three-byte runes", strings.Repeat("…", 100), 50},
		{"four-byte runes", strings.Repeat("😀", 100), 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tail(tt.s, tt.n)
			assert.True(t, utf8.ValidString(got), "Tail returned invalid UTF-8: %q", got)
		})
	}
}

func TestCapped(t *testing.T) {
	tests := []struct {
		name        string
		limit       int
		keepTail    bool
		writes      []string
		want        string
		wantDropped bool
	}{
		{"head: under the limit", 10, false, []string{"abc", "def"}, "abcdef", false},
		{"head: exactly the limit", 6, false, []string{"abc", "def"}, "abcdef", false},
		{"head: keeps the first bytes", 4, false, []string{"abc", "def"}, "abcd", true},
		{"head: full buffer drops later writes", 3, false, []string{"abc", "def", "ghi"}, "abc", true},
		{"tail: under the limit", 10, true, []string{"abc", "def"}, "abcdef", false},
		{"tail: exactly the limit", 6, true, []string{"abc", "def"}, "abcdef", false},
		{"tail: keeps the last bytes", 4, true, []string{"abc", "def"}, "cdef", true},
		{"tail: one big write", 3, true, []string{"abcdefgh"}, "fgh", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &capped{limit: tt.limit, keepTail: tt.keepTail}
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				require.NoError(t, err)
				assert.Equal(t, len(w), n, "Write must report the whole input as written")
			}
			assert.Equal(t, tt.want, c.String())
			assert.Equal(t, tt.wantDropped, c.dropped)
		})
	}
}

func TestRunShellSucceeds(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		in         Shell
		wantStdout string
		wantStderr string
	}{
		{"stdout", Shell{Command: "echo hello"}, "hello\n", ""},
		{"stderr", Shell{Command: "echo oops >&2"}, "", "oops\n"},
		{"both", Shell{Command: "echo out; echo err >&2"}, "out\n", "err\n"},
		{"env added", Shell{Command: `printf %s "$GF_TEST_VAR"`, Env: map[string]string{"GF_TEST_VAR": "v a l"}}, "v a l", ""},
		{"env overrides the worker's", Shell{Command: `printf %s "$HOME"`, Env: map[string]string{"HOME": "/nowhere"}}, "/nowhere", ""},
		{"dir", Shell{Command: "pwd -P", Dir: dir}, mustEvalSymlinks(t, dir) + "\n", ""},
		{"timeout not reached", Shell{Command: "echo quick", Timeout: 10 * time.Second}, "quick\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunShell(context.Background(), tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStdout, res.Stdout)
			assert.Equal(t, tt.wantStderr, res.Stderr)
			assert.Equal(t, 0, res.ExitCode)
			assert.Equal(t, 1, res.Attempt, "outside an activity the attempt is 1")
			assert.False(t, res.Truncated)
			assert.Greater(t, res.Duration, time.Duration(0))
		})
	}
}

func mustEvalSymlinks(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	require.NoError(t, err)
	return r
}

func TestRunShellNonZeroExit(t *testing.T) {
	longErr := strings.Repeat("x", StderrTailBytes+500)
	tests := []struct {
		name     string
		command  string
		wantCode int
		wantMsg  string
		wantTail string
	}{
		{"exit with stderr", "echo boom >&2; exit 3", 3, "exit code 3: boom", "boom"},
		{"exit without stderr", "echo out; exit 1", 1, "exit code 1", ""},
		{"multi-line stderr is trimmed", "printf '\\n first\\nsecond \\n\\n' >&2; exit 42", 42, "exit code 42: first\nsecond", "first\nsecond"},
		{"long stderr keeps the tail", "printf %s " + longErr + " >&2; exit 2", 2, "exit code 2: …" + longErr[:StderrTailBytes], "…" + longErr[:StderrTailBytes]},
		{"command not found", "/no/such/command/gf", 127, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunShell(context.Background(), Shell{Command: tt.command})
			require.Error(t, err)
			var app *temporal.ApplicationError
			require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %T", err)
			assert.Equal(t, ShellExitErrorType, app.Type())
			assert.False(t, app.NonRetryable(), "the step's retry policy decides; the error itself is retryable")
			if tt.wantMsg != "" {
				assert.Equal(t, tt.wantMsg, app.Message())
			} else {
				assert.True(t, strings.HasPrefix(app.Message(), "exit code "+strconv.Itoa(tt.wantCode)+": "), app.Message())
			}
			require.True(t, app.HasDetails())
			var f ShellFailure
			require.NoError(t, app.Details(&f))
			assert.Equal(t, tt.wantCode, f.ExitCode)
			assert.Equal(t, 1, f.Attempt)
			if tt.wantTail != "" {
				assert.Equal(t, tt.wantTail, f.StderrTail)
			}
			assert.Equal(t, tt.wantCode, res.ExitCode, "the result is returned with the error")
		})
	}
}

func TestRunShellKilledBySignal(t *testing.T) {
	res, err := RunShell(context.Background(), Shell{Command: "echo dying >&2; kill -9 $$"})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %v", err)
	assert.Equal(t, ShellExitErrorType, app.Type())
	assert.Equal(t, "killed by signal: killed: dying", app.Message())
	assert.Equal(t, -1, res.ExitCode)
	var f ShellFailure
	require.NoError(t, app.Details(&f))
	assert.Equal(t, -1, f.ExitCode)
}

// TestRunShellFailureSurvivesTheWire checks that a failed step's error can be sent to the
// server: the failure is a protobuf message whose strings must be valid UTF-8. It fails
// today when stderr holds multi-byte characters at the tail's cut (see TestTailKeepsUTF8Valid).
func TestRunShellFailureSurvivesTheWire(t *testing.T) {
	tests := []struct {
		name   string
		stderr string
	}{
		{"ascii", strings.Repeat("e", 3000)},
		{"multi-byte aligned", strings.Repeat("é", 1500)},
		{"multi-byte misaligned", strings.Repeat("é", 1500) + "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RunShell(context.Background(), Shell{Command: "printf %s '" + tt.stderr + "' >&2; exit 4"})
			require.Error(t, err)
			failure := temporal.GetDefaultFailureConverter().ErrorToFailure(err)
			_, merr := proto.Marshal(failure)
			assert.NoError(t, merr, "the failure of a shell step cannot be marshalled for the server")
		})
	}
}

func TestRunShellRefusesInvalidStep(t *testing.T) {
	tests := []struct {
		name    string
		in      Shell
		wantMsg string
	}{
		{"empty command", Shell{}, "shell: command is empty"},
		{"blank command", Shell{Command: "   "}, "shell: command is empty"},
		{"negative timeout", Shell{Command: "true", Timeout: -1}, "shell: timeout -1ns is negative"},
		{"bad env", Shell{Command: "true", Env: map[string]string{"X=Y": "1"}}, `shell: environment variable name "X=Y" is invalid`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunShell(context.Background(), tt.in)
			var app *temporal.ApplicationError
			require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %v", err)
			assert.Equal(t, "gateflow.InvalidStep", app.Type())
			assert.True(t, app.NonRetryable())
			assert.Equal(t, tt.wantMsg, app.Message())
			assert.Equal(t, ShellResult{}, res)
		})
	}
}

func TestRunShellStartFailure(t *testing.T) {
	_, err := RunShell(context.Background(), Shell{Command: "true", Dir: filepath.Join(t.TempDir(), "missing")})
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %v", err)
	assert.Equal(t, "gateflow.ShellStart", app.Type())
	assert.True(t, app.NonRetryable())
	assert.Contains(t, app.Message(), `shell: start "true"`)
}

func TestRunShellTruncatesOutput(t *testing.T) {
	const over = MaxOutputBytes + 1000
	tests := []struct {
		name       string
		command    string
		wantStdout func(t *testing.T, s string)
		wantStderr func(t *testing.T, s string)
	}{
		{
			name:    "stdout keeps the head",
			command: "echo START; head -c " + strconv.Itoa(over) + " /dev/zero | tr '\\0' a; echo END",
			wantStdout: func(t *testing.T, s string) {
				assert.Len(t, s, MaxOutputBytes)
				assert.True(t, strings.HasPrefix(s, "START\naaa"))
				assert.NotContains(t, s, "END")
			},
			wantStderr: func(t *testing.T, s string) { assert.Empty(t, s) },
		},
		{
			name:       "stderr keeps the tail",
			command:    "{ echo START; head -c " + strconv.Itoa(over) + " /dev/zero | tr '\\0' b; echo END; } >&2",
			wantStdout: func(t *testing.T, s string) { assert.Empty(t, s) },
			wantStderr: func(t *testing.T, s string) {
				assert.Len(t, s, MaxOutputBytes)
				assert.True(t, strings.HasSuffix(s, "bbbEND\n"))
				assert.NotContains(t, s, "START")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunShell(context.Background(), Shell{Command: tt.command})
			require.NoError(t, err)
			assert.True(t, res.Truncated)
			tt.wantStdout(t, res.Stdout)
			tt.wantStderr(t, res.Stderr)
		})
	}
}

// processGone reports whether pid no longer runs. A killed orphan may stay a zombie when
// the container's init does not reap, so a zombie counts as gone.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// pid (comm) STATE ...
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err, "the command should have written the background child's pid")
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.Greater(t, pid, 1)
	return pid
}

func TestRunShellKillsProcessGroup(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  bool
		check   func(t *testing.T, err error)
	}{
		{
			name:    "timeout",
			timeout: 300 * time.Millisecond,
			check: func(t *testing.T, err error) {
				var app *temporal.ApplicationError
				require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %v", err)
				assert.Equal(t, "gateflow.ShellTimeout", app.Type())
				assert.Equal(t, "shell: timed out after 300ms: started", app.Message())
				var f ShellFailure
				require.NoError(t, app.Details(&f))
				assert.Equal(t, -1, f.ExitCode)
				assert.Equal(t, "started", f.StderrTail)
			},
		},
		{
			name:   "context cancelled",
			cancel: true,
			check: func(t *testing.T, err error) {
				assert.ErrorIs(t, err, context.Canceled)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				timer := time.AfterFunc(300*time.Millisecond, cancel)
				defer timer.Stop()
			}
			start := time.Now()
			res, err := RunShell(ctx, Shell{
				Command: "sleep 30 & echo $! > " + pidfile + "; echo started >&2; sleep 30",
				Timeout: tt.timeout,
			})
			elapsed := time.Since(start)
			require.Error(t, err)
			assert.Less(t, elapsed, 5*time.Second, "the step must end soon after the deadline")
			assert.GreaterOrEqual(t, elapsed, 250*time.Millisecond)
			assert.Equal(t, -1, res.ExitCode)
			tt.check(t, err)

			pid := readPid(t, pidfile)
			deadline := time.Now().Add(3 * time.Second)
			for !processGone(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if !assert.True(t, processGone(pid), "background child %d still runs", pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}

func TestRunShellInActivityEnvironment(t *testing.T) {
	tests := []struct {
		name           string
		in             Shell
		wantStdout     string
		wantErrType    string
		wantCode       int
		wantHeartbeats bool
	}{
		{name: "success", in: Shell{Command: "echo hi"}, wantStdout: "hi\n"},
		{name: "heartbeats while running", in: Shell{Command: "sleep 1.3; echo done"}, wantStdout: "done\n", wantHeartbeats: true},
		{name: "non-zero exit", in: Shell{Command: "echo nope >&2; exit 7"}, wantErrType: ShellExitErrorType, wantCode: 7},
		{name: "invalid step", in: Shell{Command: ""}, wantErrType: "gateflow.InvalidStep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
			env := s.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(RunShell, activity.RegisterOptions{Name: ShellActivity})
			var heartbeats atomic.Int32
			env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { heartbeats.Add(1) })

			val, err := env.ExecuteActivity(ShellActivity, tt.in)
			if tt.wantErrType != "" {
				var app *temporal.ApplicationError
				require.True(t, errors.As(err, &app), "want *temporal.ApplicationError, got %v", err)
				assert.Equal(t, tt.wantErrType, app.Type())
				if tt.wantErrType == ShellExitErrorType {
					var f ShellFailure
					require.NoError(t, app.Details(&f))
					assert.Equal(t, ShellFailure{ExitCode: tt.wantCode, StderrTail: "nope", Attempt: 1}, f)
					assert.Equal(t, "exit code 7: nope", app.Message())
				}
				return
			}
			require.NoError(t, err)
			var res ShellResult
			require.NoError(t, val.Get(&res))
			assert.Equal(t, tt.wantStdout, res.Stdout)
			assert.Equal(t, 1, res.Attempt, "the attempt comes from the activity info")
			assert.Equal(t, 0, res.ExitCode)
			if tt.wantHeartbeats {
				assert.Greater(t, heartbeats.Load(), int32(0), "a command longer than a second heartbeats")
			}
		})
	}
}

// assertValidation checks a Validate result: no error when wantErr is empty, else exactly wantErr.
func assertValidation(t *testing.T, err error, wantErr string) {
	t.Helper()
	if wantErr == "" {
		assert.NoError(t, err)
		return
	}
	assert.EqualError(t, err, wantErr)
}
