package devserver

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
	"go.temporal.io/server/temporal"
)

// The server binds its ports itself, from the numbers in its configuration; there is no
// way to hand it listeners. The ports the dev server picks (FreePort) were free a moment
// before, and another process can take one in between. The server reports a port it
// cannot bind through its logger's Fatal (which for Temporal's own logger exits the
// process): the dev server's logger turns that into a panic with a *bindError, which
// startServer recovers into an error, and Start picks new ports and tries again.

// bindAttempts is how often Start tries to start the server on new ports when a picked
// port was taken before the server could bind it.
const bindAttempts = 5

// bindError is a server's Fatal report, raised as a panic by fatalLogger.
type bindError struct{ msg string }

func (e *bindError) Error() string { return "devserver: " + e.msg }

// errPortTaken says a port the server had to bind was taken (see above).
var errPortTaken = errors.New("a port was taken before the server could bind it")

// fatalLogger is a server logger whose Fatal panics with a *bindError instead of exiting.
type fatalLogger struct{ log.Logger }

// Fatal implements log.Logger.
func (l fatalLogger) Fatal(msg string, tags ...tag.Tag) {
	parts := []string{msg}
	for _, t := range tags {
		parts = append(parts, fmt.Sprintf("%s=%v", t.Key(), t.Value()))
	}
	l.Logger.Error(msg, tags...)
	panic(&bindError{msg: strings.Join(parts, " ")})
}

// With keeps Fatal's behaviour on loggers made from l.
func (l fatalLogger) With(tags ...tag.Tag) log.Logger {
	if w, ok := l.Logger.(log.WithLogger); ok {
		return fatalLogger{w.With(tags...)}
	}
	return l
}

// startServer builds and starts a Temporal server with opts, turning a Fatal report (a
// port it could not bind) into an error wrapping errPortTaken. A server that failed so is
// stopped as far as it started.
func startServer(opts []temporal.ServerOption) (srv temporal.Server, err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		be, ok := r.(*bindError)
		if !ok {
			panic(r)
		}
		if srv != nil {
			_ = srv.Stop()
		}
		srv, err = nil, fmt.Errorf("%w: %s", errPortTaken, be.msg)
	}()
	srv, err = temporal.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("devserver: new server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("devserver: start: %w", err)
	}
	return srv, nil
}
