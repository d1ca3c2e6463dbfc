package gates

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gateflow/gateflow/internal/proc"
)

// CommandType is the type of the built-in command resolver.
const CommandType = "command"

// DefaultPendingExit is the exit code that leaves a "command" gate pending, unless its
// params set another.
const DefaultPendingExit = 3

// maxCommandOutput is how much of a command's stdout and stderr is kept (the tail).
const maxCommandOutput = 64 << 10

// tailLen is how much of the output a poll's comment, reason or message carries.
const tailLen = 500

// Command is the built-in resolver "command": each poll runs a shell command (/bin/sh -c)
// on the worker and reads its exit code:
//
//   - 0 approves the gate, with the tail of stdout as the comment;
//   - PendingExit (DefaultPendingExit, 3, unless the params say otherwise) leaves it
//     pending, with the tail of stdout as the message;
//   - any other exit rejects it, with the tail of stderr (or "exit code N") as the reason.
//
// A command killed by a signal, or that cannot start, is a failed poll (see
// MaxFailedPolls), not a rejection. The command runs in its own process group, killed when
// the poll is cancelled or times out. It sees GATEFLOW_GATE, GATEFLOW_RUN_ID and
// GATEFLOW_POLL in its environment. Its params are CommandParams.
type Command struct{}

// CommandParams are the params of a "command" gate.
type CommandParams struct {
	// Command is the shell command. Required.
	Command string `json:"command"`
	// Dir is its working directory; empty means the worker's.
	Dir string `json:"dir,omitempty"`
	// Env adds to (or overrides) the worker's environment.
	Env map[string]string `json:"env,omitempty"`
	// PendingExit is the exit code meaning "not yet"; nil means DefaultPendingExit. It
	// must be between 1 and 255.
	PendingExit *int `json:"pending_exit,omitempty"`
}

// Type implements Resolver.
func (Command) Type() string { return CommandType }

// Poll implements Resolver.
func (Command) Poll(ctx context.Context, p Params) (Poll, error) {
	var in CommandParams
	if err := p.Decode(&in); err != nil {
		return Poll{}, err
	}
	pending := DefaultPendingExit
	if in.PendingExit != nil {
		pending = *in.PendingExit
	}
	switch {
	case strings.TrimSpace(in.Command) == "":
		return Poll{}, &ParamsError{Type: CommandType, Reason: "command is empty"}
	case pending < 1 || pending > 255:
		return Poll{}, &ParamsError{Type: CommandType, Reason: fmt.Sprintf("pending_exit is %d; want 1 to 255 (0 approves)", pending)}
	}
	if in.Dir != "" {
		if fi, err := os.Stat(in.Dir); err != nil || !fi.IsDir() {
			return Poll{}, &ParamsError{Type: CommandType, Reason: fmt.Sprintf("dir %q is not a directory", in.Dir)}
		}
	}
	env := map[string]string{}
	for k, v := range in.Env {
		env[k] = v
	}
	env["GATEFLOW_GATE"], env["GATEFLOW_RUN_ID"], env["GATEFLOW_POLL"] = p.Gate, p.RunID, strconv.Itoa(p.Poll)

	cmd := exec.Command("/bin/sh", "-c", in.Command)
	cmd.Dir = in.Dir
	cmd.Env = proc.MergeEnv(os.Environ(), env)
	proc.OwnGroup(cmd)
	stdout, stderr := &tailBuffer{limit: maxCommandOutput}, &tailBuffer{limit: maxCommandOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A background child that keeps the output pipes open must not hold the poll forever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return Poll{}, fmt.Errorf("gate command: start %q: %w", in.Command, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		proc.KillGroup(cmd)
		<-done
		return Poll{}, fmt.Errorf("gate command %q: %w", in.Command, ctx.Err())
	}
	if werr != nil {
		var exitErr *exec.ExitError
		if !errors.As(werr, &exitErr) {
			return Poll{}, fmt.Errorf("gate command %q: wait: %w", in.Command, werr)
		}
	}
	code := cmd.ProcessState.ExitCode()
	switch {
	case code == 0:
		return Approved(tail(stdout.String(), tailLen)), nil
	case code == pending:
		return Pending(tail(stdout.String(), tailLen)), nil
	case code < 0:
		return Poll{}, fmt.Errorf("gate command %q: killed (%s): %s", in.Command, cmd.ProcessState, tail(stderr.String(), tailLen))
	}
	reason := tail(stderr.String(), tailLen)
	if reason == "" {
		reason = fmt.Sprintf("exit code %d", code)
	} else {
		reason = fmt.Sprintf("exit code %d: %s", code, reason)
	}
	return Rejected(reason), nil
}

// tailBuffer is a goroutine-safe buffer keeping the last limit bytes written.
type tailBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.limit; over > 0 {
		rest := append([]byte(nil), t.buf.Bytes()[over:]...)
		t.buf.Reset()
		t.buf.Write(rest)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
