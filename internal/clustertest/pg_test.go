//go:build cluster

package clustertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// postgres is a PostgreSQL server of the tests' own: a data directory made by initdb
// under the temporary directory and a postgres process on a loopback port. As root it
// runs as the postgres user (PostgreSQL refuses to run as root).
type postgres struct {
	bin  string // the directory of initdb, postgres and pg_isready
	dir  string // holds data/, the socket and the log
	port int
	cred *syscall.Credential // nil unless run as root
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// pgBinDir finds PostgreSQL's programs: $PG_BIN, Debian's newest
// /usr/lib/postgresql/N/bin, else initdb on $PATH.
func pgBinDir() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return pgMajor(found[i]) < pgMajor(found[j]) })
	if len(found) > 0 {
		return filepath.Dir(found[len(found)-1]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL's initdb is not installed (scripts/ensure-postgres.sh installs Debian's postgresql; or set PG_BIN to its bin directory)")
}

// pgMajor is N of /usr/lib/postgresql/N/bin/initdb.
func pgMajor(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// startPostgres makes a fresh data directory and starts PostgreSQL on it.
func startPostgres() (_ *postgres, err error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gateflow-pg-")
	if err != nil {
		return nil, fmt.Errorf("postgres: temporary directory: %w", err)
	}
	p := &postgres{bin: bin, dir: dir}
	defer func() {
		if err != nil {
			p.destroy()
		}
	}()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("postgres: running as root needs the postgres user (Debian's postgresql package makes it): %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("postgres: chown %s: %w", dir, err)
		}
	}
	if p.port, err = freePort(); err != nil {
		return nil, err
	}
	initdb := p.command("initdb", "-D", p.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("postgres: initdb: %v: %s", err, out)
	}
	if p.log, err = os.Create(filepath.Join(dir, "postgres.log")); err != nil {
		return nil, fmt.Errorf("postgres: log file: %w", err)
	}
	return p, p.start()
}

func (p *postgres) data() string { return filepath.Join(p.dir, "data") }

// command runs one of PostgreSQL's programs as the postgres user when root.
func (p *postgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(p.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Pdeathsig: syscall.SIGKILL}
	cmd.Dir = p.dir
	return cmd
}

// start starts the server and waits until it accepts connections.
func (p *postgres) start() error {
	p.cmd = p.command("postgres", "-D", p.data(), "-p", strconv.Itoa(p.port), "-k", p.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("postgres: start: %w", err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(p.cmd, p.done)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("postgres: exited at start: %s", p.logTail())
		default:
		}
		if p.command("pg_isready", "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(p.port)).Run() == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("postgres: not ready within 60s: %s", p.logTail())
}

// stop shuts the server down with SIGINT (fast: connections are closed, work in flight
// is rolled back) and waits for it.
func (p *postgres) stop() error {
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
		return nil
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("postgres: did not stop within 60s after SIGINT; killed")
	}
}

// destroy stops the server and removes its directory.
func (p *postgres) destroy() {
	_ = p.stop()
	if p.log != nil {
		_ = p.log.Close()
	}
	_ = os.RemoveAll(p.dir)
}

// logTail is the end of the server's log, for errors.
func (p *postgres) logTail() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
	s := string(b)
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return strings.TrimSpace(s)
}
