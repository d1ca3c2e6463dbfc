package mcptools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// framing says where one message from a server ends, for msgLimit.
type framing int

const (
	framingLines  framing = iota // newline-delimited JSON (stdio)
	framingEvents                // server-sent events: a blank line ends an event
	framingBody                  // one message per body (a JSON response)
)

// msgLimit wraps a stream of messages and fails once one message is over limit bytes,
// setting tripped. The SDK decodes what it reads, so this bounds the memory a server can
// make the client use. (The SDK's own per-frame limits are set a little higher, as a
// backstop for frames split over several lines.)
type msgLimit struct {
	r       io.Reader
	framing framing
	limit   int
	tripped *atomic.Bool
	n       int  // bytes of the current message
	lastNL  bool // the last byte read was a newline (framingEvents)
}

func (l *msgLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		l.n++
		switch {
		case b != '\n':
			l.lastNL = l.lastNL && b == '\r'
		case l.framing == framingLines, l.framing == framingEvents && l.lastNL:
			l.n, l.lastNL = 0, false
		default:
			l.lastNL = true
		}
		if l.n > l.limit {
			l.tripped.Store(true)
			return 0, fmt.Errorf("%w: a message from the server is over %d bytes", ErrTooLarge, l.limit)
		}
	}
	return n, err
}

// sdkLimitSlack is how much higher than Options.MaxMessageBytes the SDK's own frame
// limits are set, so that msgLimit, which types the error, trips first.
const sdkLimitSlack = 64 << 10

// process is a started stdio server: its pipes, its stderr tail and its exit.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *tailBuffer
	exited chan struct{} // closed once the process has exited and been reaped
	err    error         // its exit status, once exited is closed
}

// startProcess starts a declared command with its stdin and stdout as pipes the pool
// owns (so the process is reaped as soon as it exits, whatever the reads are doing).
func startProcess(s Server) (*process, error) {
	cmd := exec.Command(s.Command[0], s.Command[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.WaitDelay = time.Second
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: &tailBuffer{max: 4 << 10}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	err = cmd.Start()
	closeAll(inR, outW) // the child holds its copies
	if err != nil {
		closeAll(inW, outR)
		return nil, fmt.Errorf("start %s: %w", s.Command[0], err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// stop closes the process's stdin, waits up to grace for it to exit, then sends SIGTERM,
// and after another grace kills it.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	for _, next := range []func(){
		func() { _ = p.cmd.Process.Signal(syscall.SIGTERM) },
		func() { _ = p.cmd.Process.Kill() },
	} {
		select {
		case <-p.exited:
			_ = p.stdout.Close()
			return
		case <-time.After(grace):
			next()
		}
	}
	<-p.exited
	_ = p.stdout.Close()
}

// exitReason describes why the process exited, with the tail of its stderr.
func (p *process) exitReason() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	reason := fmt.Sprintf("process exited (%v)", p.err)
	if p.err == nil {
		reason = "process exited"
	}
	if tail := bytes.TrimSpace(p.stderr.bytes()); len(tail) > 0 {
		reason += "; stderr: " + string(tail)
	}
	return reason
}

// stdioTransport connects the SDK to a started process.
type stdioTransport struct {
	proc    *process
	limit   int
	tripped *atomic.Bool
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	tr := &mcp.IOTransport{
		Reader:        io.NopCloser(&msgLimit{r: t.proc.stdout, framing: framingLines, limit: t.limit, tripped: t.tripped}),
		Writer:        t.proc.stdin,
		MaxLineLength: t.limit + sdkLimitSlack,
	}
	return tr.Connect(ctx)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf)
}

// httpTransport adds a server's headers to each request and bounds each response's
// messages (a JSON body, or each line of an event stream).
type httpTransport struct {
	base    http.RoundTripper
	headers map[string]string
	limit   int
	tripped *atomic.Bool
}

func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	f := framingBody
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		f = framingEvents
	}
	resp.Body = &limitedBody{
		Reader: &msgLimit{r: resp.Body, framing: f, limit: t.limit, tripped: t.tripped},
		Closer: resp.Body,
	}
	return resp, nil
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// errNotStarted is reported when a server has no live connection to use.
var errNotStarted = errors.New("not connected")
