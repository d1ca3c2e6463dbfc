package activities

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"
)

// Live output: a running step heartbeats what it is doing, and clients read it from the
// pending activity's heartbeat details (runs.Description.Live, `flowctl logs -f`).

// LiveTailLines is how many of its last output lines a running shell step heartbeats.
const LiveTailLines = 50

// LiveLineBytes caps one heartbeated line; a longer line is cut into pieces of this size.
const LiveLineBytes = 1 << 10

// LiveTailBytes caps the text of the heartbeated lines together: older lines are dropped
// first.
const LiveTailBytes = 16 << 10

// LiveOutput is the heartbeat detail of a running shell or agent step: the tail of its
// output (shell) or what it is doing (agent). It is bounded: at most LiveTailLines lines of
// at most LiveLineBytes each, LiveTailBytes in all.
type LiveOutput struct {
	// Attempt is the attempt that sent it (1 for the first).
	Attempt int `json:"attempt"`
	// Lines are the last complete lines the attempt printed, stdout and stderr in the
	// order they came, oldest first.
	Lines []LiveLine `json:"lines,omitempty"`
	// Progress says what a step without output lines is doing, e.g. an agent step's
	// "waiting for provider anthropic (model claude-x), 12s".
	Progress string `json:"progress,omitempty"`
	// At is when the worker sent it.
	At time.Time `json:"at"`
}

// LiveLine is one line of a running step's output.
type LiveLine struct {
	// Seq numbers the attempt's lines from 1, so a reader of successive heartbeats prints
	// only the lines it has not seen.
	Seq int64 `json:"seq"`
	// Stream is "stdout" or "stderr".
	Stream string `json:"stream"`
	// Text is the line without its line break, valid UTF-8.
	Text string `json:"text"`
}

// liveTail keeps the last lines written to a command's stdout and stderr.
type liveTail struct {
	mu      sync.Mutex
	lines   []LiveLine
	bytes   int // of the lines' text
	seq     int64
	partial map[string][]byte
}

func newLiveTail() *liveTail { return &liveTail{partial: map[string][]byte{}} }

// writer is an io.Writer feeding the tail with one stream.
func (t *liveTail) writer(stream string) *liveWriter { return &liveWriter{t: t, stream: stream} }

type liveWriter struct {
	t      *liveTail
	stream string
}

func (w *liveWriter) Write(p []byte) (int, error) {
	w.t.add(w.stream, p)
	return len(p), nil
}

func (t *liveTail) add(stream string, p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := append(t.partial[stream], p...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 && len(buf) <= LiveLineBytes {
			break
		}
		var line []byte
		if i >= 0 && i <= LiveLineBytes {
			line, buf = buf[:i], buf[i+1:]
		} else {
			cut := LiveLineBytes
			for cut > 0 && !utf8.RuneStart(buf[cut]) {
				cut--
			}
			if cut == 0 {
				cut = LiveLineBytes
			}
			line, buf = buf[:cut], buf[cut:]
		}
		t.push(stream, string(line))
	}
	// Keep the partial line in a buffer of its own: buf may alias p's copy.
	t.partial[stream] = append([]byte(nil), buf...)
}

func (t *liveTail) push(stream, text string) {
	t.seq++
	text = strings.ToValidUTF8(strings.TrimSuffix(text, "\r"), "\uFFFD")
	t.lines = append(t.lines, LiveLine{Seq: t.seq, Stream: stream, Text: text})
	t.bytes += len(text)
	drop := 0
	for len(t.lines)-drop > LiveTailLines || (t.bytes > LiveTailBytes && len(t.lines)-drop > 1) {
		t.bytes -= len(t.lines[drop].Text)
		drop++
	}
	if drop > 0 {
		t.lines = append(t.lines[:0:0], t.lines[drop:]...)
	}
}

// snapshot is the tail as a heartbeat detail.
func (t *liveTail) snapshot(attempt int) LiveOutput {
	t.mu.Lock()
	defer t.mu.Unlock()
	return LiveOutput{Attempt: attempt, Lines: append([]LiveLine(nil), t.lines...), At: time.Now()}
}

// heartbeat records live as the activity's heartbeat detail (nothing outside an activity).
func heartbeat(ctx context.Context, live LiveOutput) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, live)
	}
}
