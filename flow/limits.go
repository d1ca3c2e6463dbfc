package flow

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/runs"
)

// Limits on what a run keeps of the messages it refuses. A refusal is recorded without
// the message's payload, and with its name, sender and reason cut to these lengths, so
// senders cannot grow a run's state with what it refused (maxRefused bounds the count).
const (
	// maxRefusedName bounds RefusedMessage.Name and RefusedMessage.By, in bytes.
	maxRefusedName = 200
	// maxRefusedReason bounds RefusedMessage.Reason, in bytes.
	maxRefusedReason = 1000
)

// refusedMessage is the record of a refused vote or signal: its kind, name and sender, and
// why, each cut to its limit; never the payload.
func refusedMessage(kind runs.RefusalKind, name, by string, err error, at time.Time) runs.RefusedMessage {
	reason := "refused"
	if err != nil {
		reason = err.Error()
	}
	return runs.RefusedMessage{Kind: kind, Name: clipText(name, maxRefusedName), By: clipText(by, maxRefusedName),
		Reason: clipText(reason, maxRefusedReason), At: at}
}

// clipText returns s made valid UTF-8 and cut to at most max bytes (on a character
// boundary), with "…" (and how many bytes were cut) when it was longer.
func clipText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	suffix := fmt.Sprintf("… (%d bytes cut)", len(s)-max)
	cut := max - len(suffix)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + suffix
}

// checkDecider refuses a decider identity (the by of a budget raise or a pause) longer
// than approval.MaxNameLen, the limit on every identity, so it cannot grow the run's state.
func checkDecider(what, by string) error {
	if n := len(by); n > approval.MaxNameLen {
		return fmt.Errorf("%s: the identity (by) is %d bytes long; the limit is %d", what, n, approval.MaxNameLen)
	}
	return nil
}
