package mcptools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The example MCP server, built at the first test that needs it (fuzzing needs none).
var (
	buildOnce sync.Once
	binDir    string
	triageBin string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// triage returns the path of the example server's binary.
func triage(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "mcptools-test"); buildErr != nil {
			return
		}
		triageBin = filepath.Join(binDir, "triage-tools")
		build := exec.Command("go", "build", "-o", triageBin, "github.com/gateflow/gateflow/examples/mcp/triage-tools")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building triage-tools: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return triageBin
}

// stdioServer declares the example server over stdio, counting its calls in a file.
func stdioServer(t *testing.T) (Server, string) {
	count := filepath.Join(t.TempDir(), "calls")
	return Server{Name: "triage", Command: []string{triage(t), "--count-file", count}}, count
}

// httpServer starts the example server over streamable HTTP and declares it.
func httpServer(t *testing.T) (Server, string) {
	count := filepath.Join(t.TempDir(), "calls")
	cmd := exec.Command(triage(t), "--http", "127.0.0.1:0", "--count-file", count)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the server's address: %v", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "triage-tools: serving ")
	if !ok {
		t.Fatalf("unexpected first line %q", line)
	}
	return Server{Name: "triage", URL: url, Headers: map[string]string{"X-Test": "1"}}, count
}

// transports are the two ways of reaching the example server.
var transports = []struct {
	name    string
	declare func(*testing.T) (Server, string)
}{{"stdio", stdioServer}, {"http", httpServer}}

func newPool(t *testing.T, opts Options, servers ...Server) *Pool {
	p, err := NewPool(servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func call(t *testing.T, p *Pool, tool, args string) *Result {
	t.Helper()
	res, err := p.CallTool(testContext(t), "triage", tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("CallTool %s %s: %v", tool, args, err)
	}
	return res
}

func countLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestTransports(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s, count := tr.declare(t)
			p := newPool(t, Options{}, s)
			checkListTools(t, p)
			checkCalls(t, p)
			want := []string{
				"lookup_runbook checkout", "recent_deploys checkout", "restart_service search",
				"lookup_runbook nope", "recent_deploys checkout",
			}
			if got := countLines(t, count); !slices.Equal(got, want) {
				t.Errorf("the server counted calls %q, want each call once: %q", got, want)
			}
			res, err := p.ReadResource(testContext(t), "triage", "runbook://search")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Text, "# search") || res.MIMEType != "text/markdown" || res.Truncated {
				t.Errorf("ReadResource = %+v", res)
			}
			_, err = p.ReadResource(testContext(t), "triage", "runbook://nope")
			if se := (*ServerError)(nil); !errors.As(err, &se) || se.Retryable || se.Code == 0 {
				t.Errorf("reading a missing resource: %v, want a non-retryable protocol error", err)
			}
		})
	}
}

func checkListTools(t *testing.T, p *Pool) {
	t.Helper()
	tools, err := p.ListTools(testContext(t), "triage")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if !strings.Contains(string(tool.InputSchema), `"service"`) || tool.Description == "" {
			t.Errorf("tool %s: input schema %s, description %q", tool.Name, tool.InputSchema, tool.Description)
		}
	}
	if want := []string{"lookup_runbook", "recent_deploys", "restart_service"}; !slices.Equal(names, want) {
		t.Fatalf("tools %q, want %q", names, want)
	}
	if !tools[0].ReadOnly() || tools[0].Destructive() || !tools[2].Destructive() || tools[2].ReadOnly() {
		t.Errorf("annotations: %+v %+v", tools[0].Annotations, tools[2].Annotations)
	}
	if !strings.Contains(string(tools[1].OutputSchema), `"deploys"`) || tools[0].OutputSchema != nil {
		t.Errorf("output schemas: %s / %s", tools[1].OutputSchema, tools[0].OutputSchema)
	}
}

func checkCalls(t *testing.T, p *Pool) {
	t.Helper()
	if res := call(t, p, "lookup_runbook", `{"service":"checkout"}`); res.IsError || !strings.HasPrefix(res.Text, "# checkout") {
		t.Errorf("lookup_runbook = %+v", res)
	}
	res := call(t, p, "recent_deploys", `{"service":"checkout","limit":2}`)
	var out struct {
		Deploys []struct{ Version string } `json:"deploys"`
	}
	if err := json.Unmarshal(res.Structured, &out); err != nil || len(out.Deploys) != 2 || out.Deploys[0].Version != "checkout-v1.9" {
		t.Errorf("recent_deploys = %+v (%v)", res, err)
	}
	if res := call(t, p, "restart_service", `{"service":"search"}`); res.IsError || !strings.Contains(res.Text, "restarted search") {
		t.Errorf("restart_service = %+v", res)
	}
	// A tool that fails is a result, not a Go error.
	if res := call(t, p, "lookup_runbook", `{"service":"nope"}`); !res.IsError || !strings.Contains(res.Text, `unknown service "nope"`) {
		t.Errorf("lookup_runbook of an unknown service = %+v, want an error result", res)
	}
	// Arguments that do not fit the schema are refused by the server, before the tool runs.
	res, err := p.CallTool(testContext(t), "triage", "recent_deploys", json.RawMessage(`{"service":"checkout","limit":"two"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "/properties/limit") {
		t.Errorf("bad arguments: %+v, %v, want an error result naming the argument", res, err)
	}
	// An unknown tool is a protocol error: typed, not retryable.
	_, err = p.CallTool(testContext(t), "triage", "no_such_tool", nil)
	if se := (*ServerError)(nil); !errors.As(err, &se) || se.Retryable || se.Server != "triage" {
		t.Errorf("unknown tool: %v, want a non-retryable *ServerError", err)
	}
	if _, err := p.CallTool(testContext(t), "triage", "lookup_runbook", json.RawMessage(`[1]`)); err == nil {
		t.Error("array arguments: no error")
	}
	// The call after all this still works: the connection was kept.
	call(t, p, "recent_deploys", `{"service":"checkout"}`)
}

func TestConcurrentCalls(t *testing.T) {
	s, count := stdioServer(t)
	p := newPool(t, Options{}, s)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := p.CallTool(testContext(t), "triage", "recent_deploys", json.RawMessage(fmt.Sprintf(`{"service":"search","limit":%d}`, i%5+1)))
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := countLines(t, count); len(got) != n {
		t.Errorf("%d calls counted, want %d", len(got), n)
	}
	if pid := p.pid("triage"); pid == 0 {
		t.Error("no process")
	}
}
