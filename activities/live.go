package activities

import (
	"github.com/gateflow/gateflow/artifacts"

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

// liveTail keeps the last lines written to a command's stdout and stderr.
type liveTail struct {
	mu      sync.Mutex
	lines   []artifacts.LiveLine
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
	t.lines = append(t.lines, artifacts.LiveLine{Seq: t.seq, Stream: stream, Text: text})
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
func (t *liveTail) snapshot(attempt int) artifacts.LiveOutput {
	t.mu.Lock()
	defer t.mu.Unlock()
	return artifacts.LiveOutput{Attempt: attempt, Lines: append([]artifacts.LiveLine(nil), t.lines...), At: time.Now()}
}

// heartbeat records live as the activity's heartbeat detail (nothing outside an activity).
func heartbeat(ctx context.Context, live artifacts.LiveOutput) {
	if activity.IsActivity(ctx) {
		activity.RecordHeartbeat(ctx, live)
	}
}
