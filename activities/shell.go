package activities

import (
	"github.com/gateflow/gateflow/artifacts"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gateflow/gateflow/internal/proc"

	"go.temporal.io/sdk/temporal"
)

// ShellActivity is the Temporal activity name of shell steps.
const ShellActivity = "gateflow.shell"

// ShellExitErrorType is the Temporal application error type of a command that exited with a
// non-zero code. Steps without an explicit retry policy treat it as non-retryable.
const ShellExitErrorType = "gateflow.ShellExit"

// ShellStartErrorType is the application error type of a command that could not be
// started (no such shell, a bad working directory); it is not retried.
const ShellStartErrorType = "gateflow.ShellStart"

// ShellTimeoutErrorType is the application error type of a command killed at its timeout.
const ShellTimeoutErrorType = "gateflow.ShellTimeout"

// MaxOutputBytes bounds how much of stdout (its head) and of stderr (its tail) a shell
// step's result carries, whatever the command prints: results stay small, in the history
// and in the workflow that decodes them. A longer stream sets ShellResult.Truncated; with
// a blob store (WithOutputStore) it is kept whole there, up to OutputLimit (see
// shell_output.go).
const MaxOutputBytes = 256 << 10

// StderrTailBytes is how much of the end of stderr a failed step's error message carries.
const StderrTailBytes = 2 << 10

// Shell is a shell step: Command runs with /bin/sh -c in its own process group.
//
// Inside a worker the command also gets the step's identity: GATEFLOW_STEP (its ID in the
// run), GATEFLOW_ATTEMPT (1 for the first attempt) and GATEFLOW_IDEMPOTENCY_KEY (the same
// for every attempt of the step; see IdempotencyKey). While it runs, the step heartbeats
// the last lines of its stdout and stderr every second as a LiveOutput.
type Shell struct {
	// Command is the shell command line. Required.
	Command string `json:"command"`
	// Dir is the working directory; empty means the worker's.
	Dir string `json:"dir,omitempty"`
	// Env adds variables to the worker's environment for this command. It may not set
	// GATEFLOW_STEP, GATEFLOW_ATTEMPT or GATEFLOW_IDEMPOTENCY_KEY.
	Env map[string]string `json:"env,omitempty"`
	// Timeout bounds one attempt of the command; when it passes the process group is
	// killed and the attempt fails. Zero leaves it to the step's timeout
	// (flow.StepTimeout, default one hour).
	Timeout time.Duration `json:"timeout,omitempty"`
	// Outputs are the files the step leaves for later steps: slash paths or globs relative
	// to the work directory ("dist/*.tar.gz"); a matched directory stands for every regular
	// file under it. After the command they are uploaded to the worker's blob store and
	// listed in ShellResult.Artifacts, named by their path relative to the work directory.
	// A pattern that matches no file fails a step that succeeded (a failed step keeps what
	// it can). See shell_artifacts.go.
	Outputs []string `json:"outputs,omitempty"`
	// Inputs are artifacts of earlier steps of the run, placed in the work directory
	// before the command runs (on whichever worker runs it).
	Inputs []ArtifactInput `json:"inputs,omitempty"`
}

// Validate reports what is wrong with a shell step before it is dispatched.
func (s Shell) Validate() error {
	if strings.TrimSpace(s.Command) == "" {
		return errors.New("shell: command is empty")
	}
	if s.Timeout < 0 {
		return fmt.Errorf("shell: timeout %s is negative", s.Timeout)
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("shell: environment variable name %q is invalid", k)
		}
		switch k {
		case EnvStep, EnvAttempt, EnvIdempotencyKey:
			return fmt.Errorf("shell: environment variable %s is set by the worker; use another name", k)
		}
	}
	return s.validateArtifacts() // shell_artifacts.go
}

// ShellResult is what a shell step produced.
type ShellResult struct {
	// Stdout is the head of what the command printed on stdout, at most MaxOutputBytes
	// (or OutputLimit when lower); Stderr the tail of its stderr, as long.
	Stdout   string        `json:"stdout"`
	Stderr   string        `json:"stderr"`
	ExitCode int           `json:"exit_code"`
	Duration time.Duration `json:"duration"`
	// Truncated is set when Stdout or Stderr lacks part of its stream (StdoutCut says
	// which).
	Truncated bool `json:"truncated,omitempty"`
	// OutputLimit is the bound per stream that cut what the step kept, set with
	// Truncated: the result's when the streams are whole in the blob store or there is no
	// store, the store's (OutputLimit) when a stored stream was cut too.
	OutputLimit int `json:"output_limit,omitempty"`
	// StdoutBytes and StderrBytes are how many bytes the command printed on each stream.
	StdoutBytes int64 `json:"stdout_bytes,omitempty"`
	StderrBytes int64 `json:"stderr_bytes,omitempty"`
	// StdoutBlob and StderrBlob are the whole streams kept in the worker's blob store, set
	// when a stream was longer than the result keeps and the worker has a store.
	StdoutBlob *StoredOutput `json:"stdout_blob,omitempty"`
	StderrBlob *StoredOutput `json:"stderr_blob,omitempty"`
	// OutputStoreError says why a long stream could not be kept in the blob store (the
	// result keeps its preview).
	OutputStoreError string `json:"output_store_error,omitempty"`
	// Attempt is the activity attempt that produced this result (1 for the first).
	Attempt int `json:"attempt"`
	// Artifacts are the files of Shell.Outputs, as stored in the blob store.
	Artifacts []artifacts.Artifact `json:"artifacts,omitempty"`
}

// ShellFailure is the detail attached to a failed shell step's error.
type ShellFailure struct {
	ExitCode   int    `json:"exit_code"`
	StderrTail string `json:"stderr_tail"`
	Attempt    int    `json:"attempt"`
	// Artifacts are the outputs a failed step could still collect (best effort).
	Artifacts []artifacts.Artifact `json:"artifacts,omitempty"`
}

// runShell runs the command of a shell step (RunShell, shell_artifacts.go, adds the
// artifacts around it). A non-zero exit fails with an application error of type
// ShellExitErrorType whose message carries the exit code and the tail of stderr, and whose
// details are a ShellFailure. Cancelling ctx kills the process group.
func runShell(ctx context.Context, in Shell) (ShellResult, error) {
	if err := in.Validate(); err != nil {
		return ShellResult{}, temporal.NewNonRetryableApplicationError(err.Error(), InvalidStepErrorType, nil)
	}
	attempt := 1
	env := in.Env
	if id, ok := Identity(ctx); ok {
		attempt = id.Attempt
		env = id.env()
		for k, v := range in.Env {
			env[k] = v // Validate refused the identity's names
		}
	}
	// Heartbeats go on the activity's own context: one sent on the timeout's context as it
	// expires fails, and the SDK then cancels the activity (a timeout read as cancelled).
	hbctx := ctx
	if in.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.Timeout)
		defer cancel()
	}

	cmd := exec.Command("/bin/sh", "-c", in.Command)
	cmd.Dir = in.Dir
	cmd.Env = proc.MergeEnv(os.Environ(), env)
	proc.OwnGroup(cmd)
	streams := newShellStreams(ctx, hbctx, attempt) // shell_output.go
	live := newLiveTail()
	cmd.Stdout = io.MultiWriter(streams.stdout, live.writer("stdout"))
	cmd.Stderr = io.MultiWriter(streams.stderr, live.writer("stderr"))
	// A background child that keeps the output pipes open must not hold the step forever.
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return ShellResult{Attempt: attempt}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("shell: start %q: %v", in.Command, err), ShellStartErrorType, err)
	}
	waitErr := waitHeartbeating(ctx, hbctx, cmd, func() artifacts.LiveOutput { return live.snapshot(attempt) })
	res := ShellResult{ExitCode: cmd.ProcessState.ExitCode(), Duration: time.Since(start), Attempt: attempt}
	streams.fill(&res)
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) && in.Timeout > 0 {
			return res, temporal.NewApplicationError(
				fmt.Sprintf("shell: timed out after %s: %s", in.Timeout, Tail(res.Stderr, StderrTailBytes)),
				ShellTimeoutErrorType, ShellFailure{ExitCode: -1, StderrTail: Tail(res.Stderr, StderrTailBytes), Attempt: attempt})
		}
		return res, ctxErr
	}
	if waitErr != nil {
		var exitErr *exec.ExitError
		if !errors.As(waitErr, &exitErr) {
			return res, fmt.Errorf("shell: wait: %w", waitErr)
		}
		tail := Tail(res.Stderr, StderrTailBytes)
		msg := fmt.Sprintf("exit code %d", res.ExitCode)
		if res.ExitCode < 0 {
			msg = "killed by " + exitErr.ProcessState.String()
		}
		if tail != "" {
			msg += ": " + tail
		}
		return res, temporal.NewApplicationError(msg, ShellExitErrorType,
			ShellFailure{ExitCode: res.ExitCode, StderrTail: tail, Attempt: attempt})
	}
	return res, nil
}

// waitHeartbeating waits for cmd while heartbeating the live output on hbctx every second
// (inside an activity) and kills the whole process group when ctx is done.
func waitHeartbeating(ctx, hbctx context.Context, cmd *exec.Cmd, live func() artifacts.LiveOutput) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			proc.KillGroup(cmd)
			return <-done
		case <-tick.C:
			heartbeat(hbctx, live())
		}
	}
}

// Tail returns about the last n bytes of s (an ellipsis marks a cut), trimmed of surrounding
// white space, starting on a line boundary when one is near. The result is valid UTF-8
// (invalid bytes become U+FFFD), so it can travel in a Temporal failure message.
func Tail(s string, n int) string { return proc.Tail(s, n) }

// capped is a goroutine-safe buffer that keeps at most limit bytes: the first ones, or
// with keepTail the last ones.
type capped struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	limit    int
	keepTail bool
	dropped  bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if c.keepTail {
		c.buf.Write(p)
		if over := c.buf.Len() - c.limit; over > 0 {
			// Next discards without copying; Write slides the rest down only when half the
			// buffer is free, so a long stream costs linear time even with a large limit.
			c.dropped = true
			c.buf.Next(over)
		}
		return n, nil
	}
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.dropped = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return n, nil
	}
	c.buf.Write(p)
	return n, nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
