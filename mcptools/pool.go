package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options tune a Pool. Zero values take the defaults.
type Options struct {
	// MaxResultBytes bounds the text (and structured content) of one tool result or
	// resource read; more is cut with a marker. Default 64 KiB.
	MaxResultBytes int
	// MaxMessageBytes bounds one message read from a server; a larger one is refused
	// with ErrTooLarge and the connection dropped. Default 4 MiB.
	MaxMessageBytes int
	// StopGrace is how long Close waits for a stdio server to exit after closing its
	// stdin, and again after SIGTERM, before killing it. Default 2s.
	StopGrace time.Duration
	// HTTPTransport is the base round tripper of streamable-HTTP servers; default
	// http.DefaultTransport.
	HTTPTransport http.RoundTripper
	// ClientName and ClientVersion identify the pool to servers; default "gateflow", "1".
	ClientName, ClientVersion string
}

func (o Options) withDefaults() Options {
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = 64 << 10
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 4 << 20
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	if o.HTTPTransport == nil {
		o.HTTPTransport = http.DefaultTransport
	}
	if o.ClientName == "" {
		o.ClientName = "gateflow"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "1"
	}
	return o
}

// maxTools bounds the tools listed for one server.
const maxTools = 1000

// Pool connects lazily to declared MCP servers and keeps one session per server, safe
// for concurrent use. A stdio server is started at its first use and stopped by Close;
// one whose connection broke (the process died) is started again at the next use.
type Pool struct {
	opts    Options
	servers map[string]Server

	mu     sync.Mutex
	conns  map[string]*conn
	closed bool
}

// conn is the connection state of one server.
type conn struct {
	mu     sync.Mutex // serialises connecting and closing
	cur    *live      // nil until connected, or after a failure
	closed bool
}

// live is one session with a server.
type live struct {
	session *mcp.ClientSession
	proc    *process // nil for HTTP servers
	done    chan struct{}
	tripped atomic.Bool // a message was over the limit
}

// dead reports whether the session ended or the server's process exited.
func (l *live) dead() bool {
	var exited <-chan struct{}
	if l.proc != nil {
		exited = l.proc.exited
	}
	select {
	case <-l.done:
		return true
	case <-exited:
		return true
	default:
		return false
	}
}

func (l *live) close(grace time.Duration) error {
	err := l.session.Close()
	if l.proc != nil {
		l.proc.stop(grace)
		err = nil // closing the pipes of a process that exited is no failure
	}
	return err
}

// NewPool checks the declarations and returns a pool that connects to nothing yet.
func NewPool(servers []Server, opts Options) (*Pool, error) {
	p := &Pool{opts: opts.withDefaults(), servers: map[string]Server{}, conns: map[string]*conn{}}
	for _, s := range servers {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if _, dup := p.servers[s.Name]; dup {
			return nil, fmt.Errorf("mcp server %q declared twice", s.Name)
		}
		p.servers[s.Name] = s
	}
	return p, nil
}

// Servers returns the declared server names, sorted.
func (p *Pool) Servers() []string {
	names := make([]string, 0, len(p.servers))
	for n := range p.servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ListTools lists a server's tools, sorted by name.
func (p *Pool) ListTools(ctx context.Context, server string) ([]Tool, error) {
	var tools []Tool
	err := p.do(ctx, server, "list tools", func(s *mcp.ClientSession) error {
		tools = tools[:0]
		for m, err := range s.Tools(ctx, nil) {
			if err != nil {
				return err
			}
			if len(tools) == maxTools {
				return fmt.Errorf("more than %d tools", maxTools)
			}
			t, err := toolFromMCP(m)
			if err != nil {
				return err
			}
			tools = append(tools, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return tools, nil
}

// Catalog lists the tools of the given servers (all declared ones when none is given).
func (p *Pool) Catalog(ctx context.Context, servers ...string) (*Catalog, error) {
	if len(servers) == 0 {
		servers = p.Servers()
	}
	c := &Catalog{Servers: []ServerTools{}}
	for _, s := range servers {
		tools, err := p.ListTools(ctx, s)
		if err != nil {
			return nil, err
		}
		if err := c.Add(s, tools); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// CallTool calls a tool with args (a JSON object; empty means {}). A tool that ran and
// failed is a Result with IsError set; err is a *ServerError when the server could not
// be asked or answered with a protocol error (such as an unknown tool).
func (p *Pool) CallTool(ctx context.Context, server, tool string, args json.RawMessage) (*Result, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("mcp server %q: call tool %q: arguments must be a JSON object", server, tool)
	}
	var res *Result
	err := p.do(ctx, server, "call tool "+tool, func(s *mcp.ClientSession) error {
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err
		}
		res, err = resultFromMCP(r, p.opts.MaxResultBytes)
		return err
	})
	return res, err
}

// ReadResource reads a resource of a server, bounded like a tool result.
func (p *Pool) ReadResource(ctx context.Context, server, uri string) (*ResourceContent, error) {
	var res *ResourceContent
	err := p.do(ctx, server, "read resource "+uri, func(s *mcp.ClientSession) error {
		r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return err
		}
		res = resourceFromMCP(uri, r, p.opts.MaxResultBytes)
		return nil
	})
	return res, err
}

// Close stops every stdio server and closes every session. The pool cannot be used
// afterwards.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	conns := make([]*conn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	var errs []error
	for _, c := range conns {
		c.mu.Lock()
		c.closed = true
		if c.cur != nil {
			errs = append(errs, c.cur.close(p.opts.StopGrace))
			c.cur = nil
		}
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

// do runs f on a live session of server and turns its failure into a *ServerError,
// dropping a broken connection so that the next call connects again.
func (p *Pool) do(ctx context.Context, server, op string, f func(*mcp.ClientSession) error) error {
	l, c, err := p.live(ctx, server)
	if err != nil {
		return err
	}
	err = f(l.session)
	if err == nil {
		return nil
	}
	se := classify(server, op, err, l.tripped.Load())
	if l.proc != nil {
		if reason := l.proc.exitReason(); reason != "" {
			se.Err = fmt.Errorf("%w (%s)", se.Err, reason)
		}
	}
	if l.dead() || l.tripped.Load() || se.Retryable && ctx.Err() == nil {
		p.drop(c, l)
	}
	return se
}

// drop closes l if it is still the server's current session (whoever replaced it or
// closed the pool closed it already).
func (p *Pool) drop(c *conn, l *live) {
	c.mu.Lock()
	current := c.cur == l
	if current {
		c.cur = nil
	}
	c.mu.Unlock()
	if current {
		_ = l.close(p.opts.StopGrace)
	}
}

// live returns the server's session, connecting when there is none or it died: one
// retry of the connect, then a retryable *ServerError.
func (p *Pool) live(ctx context.Context, server string) (*live, *conn, error) {
	s, ok := p.servers[server]
	if !ok {
		return nil, nil, &ServerError{Server: server, Op: "connect", Err: ErrUnknownServer}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, &ServerError{Server: server, Op: "connect", Err: ErrClosed}
	}
	c := p.conns[server]
	if c == nil {
		c = &conn{}
		p.conns[server] = c
	}
	p.mu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, &ServerError{Server: server, Op: "connect", Err: ErrClosed}
	}
	if c.cur != nil && !c.cur.dead() {
		return c.cur, c, nil
	}
	if c.cur != nil {
		_ = c.cur.close(p.opts.StopGrace)
		c.cur = nil
	}
	var err error
	for attempt := 0; attempt < 2 && ctx.Err() == nil; attempt++ {
		var l *live
		if l, err = p.connect(ctx, s); err == nil {
			c.cur = l
			return l, c, nil
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	return nil, nil, classify(server, "connect", err, false)
}

// connect starts (for stdio) and initialises one session.
func (p *Pool) connect(ctx context.Context, s Server) (*live, error) {
	l := &live{done: make(chan struct{})}
	var t mcp.Transport
	if len(s.Command) > 0 {
		proc, err := startProcess(s)
		if err != nil {
			return nil, err
		}
		l.proc = proc
		t = &stdioTransport{proc: proc, limit: p.opts.MaxMessageBytes, tripped: &l.tripped}
	} else {
		t = &mcp.StreamableClientTransport{
			Endpoint: s.URL,
			HTTPClient: &http.Client{Transport: &httpTransport{
				base: p.opts.HTTPTransport, headers: s.Headers,
				limit: p.opts.MaxMessageBytes, tripped: &l.tripped,
			}},
			DisableStandaloneSSE: true,
			MaxEventSize:         p.opts.MaxMessageBytes + sdkLimitSlack,
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: p.opts.ClientName, Version: p.opts.ClientVersion}, nil)
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		if l.proc != nil {
			l.proc.stop(p.opts.StopGrace)
			if reason := l.proc.exitReason(); reason != "" {
				err = fmt.Errorf("%w (%s)", err, reason)
			}
		}
		return nil, err
	}
	l.session = session
	go func() {
		_ = session.Wait()
		close(l.done)
	}()
	return l, nil
}

// current returns the server's current session, nil if none (for tests).
func (p *Pool) current(server string) *live {
	p.mu.Lock()
	c := p.conns[server]
	p.mu.Unlock()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// pid returns the process id of a stdio server's current process, 0 if none (for tests).
func (p *Pool) pid(server string) int {
	l := p.current(server)
	if l == nil || l.proc == nil {
		return 0
	}
	return l.proc.cmd.Process.Pid
}
