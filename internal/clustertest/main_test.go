//go:build cluster

package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gateflow/gateflow/internal/proc"

	"go.temporal.io/sdk/client"
)

// env is the cluster every test runs on: one PostgreSQL, one Temporal server process on
// it, the binaries and a client for reading histories.
var env struct {
	worker, ctl, temporal string // binaries
	flows                 string // testdata/flows, served by every worker
	pg                    *postgres
	server                *temporalServer
	address               string
	tc                    client.Client
}

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	start := time.Now()
	if err := setUp(); err != nil {
		fmt.Fprintln(os.Stderr, "clustertest:", err)
		tearDown()
		return 1
	}
	report(nil, "cluster up in %s: PostgreSQL (%s) on 127.0.0.1:%d, Temporal server process on %s", time.Since(start).Round(time.Millisecond), env.pg.bin, env.pg.port, env.address)
	code := m.Run()
	tearDown()
	return code
}

func setUp() error {
	if err := findBinaries(); err != nil {
		return err
	}
	abs, err := filepath.Abs("testdata/flows")
	if err != nil {
		return err
	}
	env.flows = abs
	if env.pg, err = startPostgres(); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	env.address = fmt.Sprintf("127.0.0.1:%d", port)
	env.server = &temporalServer{port: port}
	if err := env.server.start(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env.tc, err = client.DialContext(ctx, client.Options{HostPort: env.address, Logger: quietLogger{}})
	if err != nil {
		return fmt.Errorf("dial %s: %w", env.address, err)
	}
	return nil
}

func tearDown() {
	if env.tc != nil {
		env.tc.Close()
	}
	if env.server != nil {
		env.server.stop()
	}
	if env.pg != nil {
		env.pg.destroy()
	}
}

// findBinaries takes flow-worker, flowctl and temporal-pg from GATEFLOW_BIN_DIR (make
// test-cluster builds them there), else builds them into a temporary directory.
func findBinaries() error {
	dir := os.Getenv("GATEFLOW_BIN_DIR")
	pkgs := map[string]string{
		"flow-worker": "../../cmd/flow-worker",
		"flowctl":     "../../cmd/flowctl",
		"temporal-pg": "../devserver/cluster/cmd/temporal-pg",
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "gateflow-cluster-bin-"); err != nil {
			return err
		}
		for name, pkg := range pkgs {
			if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
				return fmt.Errorf("go build %s: %v: %s", pkg, err, out)
			}
		}
	}
	for name := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("%s is missing in %s (make build-cluster builds it): %w", name, dir, err)
		}
	}
	env.worker = filepath.Join(dir, "flow-worker")
	env.ctl = filepath.Join(dir, "flowctl")
	env.temporal = filepath.Join(dir, "temporal-pg")
	return nil
}

// report logs a figure to the test log and to stdout, so `make test-cluster` shows it.
func report(t *testing.T, format string, args ...any) {
	if t != nil {
		t.Helper()
		t.Logf(format, args...)
	}
	fmt.Printf("clustertest: "+format+"\n", args...)
}

// freePort is a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// process is a child process whose output is kept, started once it printed a ready line.
type process struct {
	name   string
	cmd    *exec.Cmd
	output *proc.Buffer // stdout and stderr
	exited chan struct{}
}

// startProcess starts cmd and waits until a line of its stdout contains ready.
func startProcess(name string, cmd *exec.Cmd, ready string, timeout time.Duration) (*process, error) {
	p := &process{name: name, cmd: cmd, output: &proc.Buffer{}, exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = p.output
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL // never outlive the test binary
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	isReady := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := sync.Once{}
		for sc.Scan() {
			_, _ = p.output.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), ready) {
				once.Do(func() { close(isReady) })
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case <-isReady:
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("%s exited at start: %s", name, p.output.String())
	case <-time.After(timeout):
		p.kill()
		return nil, fmt.Errorf("%s not ready within %s: %s", name, timeout, p.output.String())
	}
}

// kill sends SIGKILL and waits for the exit.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// terminate sends SIGTERM and waits up to d for the exit, then kills.
func (p *process) terminate(d time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(d):
		p.kill()
	}
}

// temporalServer is the temporal-pg process on a fixed frontend port, so it can be
// restarted where the workers and clients look for it.
type temporalServer struct {
	port int
	proc *process
}

func (s *temporalServer) start() error {
	cmd := exec.Command(env.temporal, "--pg-port", fmt.Sprint(env.pg.port), "--port", fmt.Sprint(s.port))
	p, err := startProcess("temporal-pg", cmd, "temporal-pg: ready", 90*time.Second)
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

func (s *temporalServer) stop() {
	if s.proc != nil {
		s.proc.terminate(30 * time.Second)
		s.proc = nil
	}
}

// kill9 kills the server with SIGKILL: nothing is flushed or handed over.
func (s *temporalServer) kill9() {
	if s.proc != nil {
		s.proc.kill()
		s.proc = nil
	}
}

// worker is a flow-worker process serving testdata/flows and the example flows on a task
// queue of the cluster; CLUSTER_WORKER=name is in its environment (the steps write it).
type worker struct {
	name, queue string
	proc        *process
	starts      int
}

// startWorker starts a flow-worker on queue; it is killed when the test ends.
func startWorker(t *testing.T, name, queue string) *worker {
	t.Helper()
	w := &worker{name: name, queue: queue}
	if err := w.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.proc != nil {
			w.proc.kill()
		}
	})
	return w
}

func (w *worker) start() error {
	cmd := exec.Command(env.worker, "--address", env.address, "--namespace", "default", "--task-queue", w.queue,
		"--flows", env.flows, "--model", "scripted", "--stop-timeout", "2s", "--log-level", "error")
	cmd.Env = append(os.Environ(), "CLUSTER_WORKER="+w.name)
	p, err := startProcess("flow-worker "+w.name, cmd, "flow-worker: ready", 60*time.Second)
	if err != nil {
		return err
	}
	w.proc = p
	w.starts++
	return nil
}

// identity is the SDK's default worker identity of the process: PID@HOST@.
func (w *worker) identity() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%d@%s@", w.proc.cmd.Process.Pid, h)
}

// result is a flowctl run.
type result struct {
	stdout, stderr string
	code           int
}

// flowctl runs bin/flowctl against the cluster on queue.
func flowctl(t *testing.T, queue string, args ...string) result {
	t.Helper()
	cmd := exec.Command(env.ctl, append([]string{"--address", env.address, "--namespace", "default", "--task-queue", queue}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := result{stdout: o.String(), stderr: e.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("flowctl %v: %v", args, err)
	}
	return r
}

// quietLogger silences the SDK client of the tests.
type quietLogger struct{}

func (quietLogger) Debug(string, ...interface{}) {}
func (quietLogger) Info(string, ...interface{})  {}
func (quietLogger) Warn(string, ...interface{})  {}
func (quietLogger) Error(string, ...interface{}) {}
