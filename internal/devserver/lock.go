package devserver

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dbLock is the exclusive lock a server holds on its database file while it runs, so a
// second server started on the same file is refused instead of joining the first as a
// second cluster node.
type dbLock struct{ f *os.File }

// lockDB takes the lock of the database file db (db + ".lock", holding the owner's pid).
func lockDB(db string) (*dbLock, error) {
	path := db + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("devserver: lock db file %s: %w", db, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			owner := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				owner = "process " + strconv.Itoa(pid)
			}
			return nil, fmt.Errorf("devserver: db file %s is in use by another server (%s): stop it, or give this one another --db-file", db, owner)
		}
		return nil, fmt.Errorf("devserver: lock db file %s: %w", db, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dbLock{f: f}, nil
}

// release gives the lock back.
func (l *dbLock) release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}
