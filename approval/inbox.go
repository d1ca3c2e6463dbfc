package approval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Default bounds of an Inbox: votes kept per gate not yet open, and in all.
const (
	DefaultInboxPerGate = 100
	DefaultInboxTotal   = 1000
)

// Inbox keeps votes that arrive before the run reaches their gate, per gate name, in
// arrival order, until the gate opens and takes them (Take, then Gate.ApplyEarly). Only
// the vote's form is checked on arrival (Vote.Validate); whether the person may decide is
// checked against the gate's rules when it opens.
//
// It is bounded, since anyone able to send an Update could otherwise grow the run's state:
// at most PerGate votes per gate and Total in all (0 means DefaultInboxPerGate and
// DefaultInboxTotal). A vote over a bound is refused with CodeInboxFull. A vote equal to
// one already waiting (same gate, person and kind) is dropped without error, since only
// the first could count.
//
// The zero value is ready to use. It round-trips through JSON (for a query or for
// continue-as-new) and iterates gates in sorted order, so workflow code may hold it.
type Inbox struct {
	// PerGate bounds the votes kept for one gate; 0 means DefaultInboxPerGate.
	PerGate int
	// Total bounds the votes kept in all; 0 means DefaultInboxTotal.
	Total int

	votes map[string][]Vote
	count int
}

// Add keeps v until its gate opens. It returns the *VoteError of Vote.Validate for a
// malformed vote, or one with CodeInboxFull when a bound is reached; nil when v was kept
// or was a repeat of a vote already waiting.
func (in *Inbox) Add(v Vote) error {
	nv, verr := v.normalize()
	if verr != nil {
		return verr
	}
	held := in.votes[nv.Gate]
	for _, h := range held {
		if h.By == nv.By && h.Kind == nv.Kind {
			return nil
		}
	}
	full := func(reason string) error {
		return &VoteError{Gate: nv.Gate, By: nv.By, Code: CodeInboxFull, Reason: reason}
	}
	if limit := in.perGate(); len(held) >= limit {
		return full(fmt.Sprintf("the run has not reached this gate and already keeps %d early votes for it, the most it keeps; %s's vote was not kept, send it again once the gate is open", limit, nv.By))
	}
	if limit := in.total(); in.count >= limit {
		return full(fmt.Sprintf("the run has not reached this gate and already keeps %d early votes for its gates, the most it keeps; %s's vote was not kept, send it again once the gate is open", limit, nv.By))
	}
	if in.votes == nil {
		in.votes = map[string][]Vote{}
	}
	in.votes[nv.Gate] = append(held, nv)
	in.count++
	return nil
}

// Take removes and returns the votes waiting for gate, in arrival order (nil if none).
// Call it when the gate opens and pass the votes to Gate.ApplyEarly.
func (in *Inbox) Take(gate string) []Vote {
	gate = strings.TrimSpace(gate)
	votes := in.votes[gate]
	if votes == nil {
		return nil
	}
	delete(in.votes, gate)
	in.count -= len(votes)
	return votes
}

// Waiting returns a copy of the votes waiting for gate, in arrival order, for display.
func (in *Inbox) Waiting(gate string) []Vote {
	return slices.Clone(in.votes[strings.TrimSpace(gate)])
}

// Gates returns the names of the gates with votes waiting, sorted.
func (in *Inbox) Gates() []string {
	names := make([]string, 0, len(in.votes))
	for name := range in.votes {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Len is the number of votes waiting, for all gates.
func (in *Inbox) Len() int { return in.count }

func (in *Inbox) perGate() int {
	if in.PerGate > 0 {
		return in.PerGate
	}
	return DefaultInboxPerGate
}

func (in *Inbox) total() int {
	if in.Total > 0 {
		return in.Total
	}
	return DefaultInboxTotal
}

// inboxJSON is the JSON form of an Inbox.
type inboxJSON struct {
	PerGate int               `json:"per_gate,omitempty"`
	Total   int               `json:"total,omitempty"`
	Votes   map[string][]Vote `json:"votes,omitempty"`
}

// MarshalJSON writes {"per_gate", "total", "votes": {gate: [vote, ...]}} (gates in sorted
// order, as encoding/json writes maps).
func (in Inbox) MarshalJSON() ([]byte, error) {
	return json.Marshal(inboxJSON{PerGate: in.PerGate, Total: in.Total, Votes: in.votes})
}

// UnmarshalJSON reads what MarshalJSON wrote. Votes are kept as they are (they were
// checked when added); empty gate entries are dropped.
func (in *Inbox) UnmarshalJSON(data []byte) error {
	var j inboxJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("approval inbox: %w", err)
	}
	*in = Inbox{PerGate: j.PerGate, Total: j.Total}
	for gate, votes := range j.Votes {
		if len(votes) == 0 {
			continue
		}
		if in.votes == nil {
			in.votes = map[string][]Vote{}
		}
		in.votes[gate] = votes
		in.count += len(votes)
	}
	return nil
}
