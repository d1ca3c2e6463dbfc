package signals

import (
	"encoding/json"
	"fmt"
)

// Default bounds of a Buffer.
const (
	// DefaultBufferLimit is how many pending signals a Buffer keeps; beyond it the
	// oldest is dropped.
	DefaultBufferLimit = 1000
	// DefaultSeenLimit is how many signal ids a Buffer remembers for deduplication;
	// beyond it the oldest id is forgotten.
	DefaultSeenLimit = 10000
)

// Buffer holds the signals one run has received and not yet consumed, in arrival order.
// Signals sent before the run waits are kept until a wait takes them; a repeated ID is
// delivered once. It is bounded: past Limit pending signals the oldest is dropped (and
// counted), and past SeenLimit ids the oldest id of a signal no longer pending is
// forgotten, so an id repeated after that many newer ones is accepted again.
//
// The zero value is ready to use with the default bounds. A Buffer serialises to JSON
// (pending signals, remembered ids, drop count and bounds) so that it can be carried over
// continue-as-new with its deduplication state.
type Buffer struct {
	limit     int
	seenLimit int
	pending   []Envelope
	seen      []string // remembered ids, oldest first
	seenSet   map[string]struct{}
	dropped   int
}

// NewBuffer returns a Buffer keeping at most limit pending signals and remembering at
// most seenLimit ids; zero or negative values take the defaults. seenLimit is raised to
// limit if smaller, so a pending signal's id is always remembered.
func NewBuffer(limit, seenLimit int) *Buffer {
	return &Buffer{limit: limit, seenLimit: seenLimit}
}

// Limit is the most pending signals the buffer keeps.
func (b *Buffer) Limit() int {
	if b.limit <= 0 {
		return DefaultBufferLimit
	}
	return b.limit
}

// SeenLimit is the most ids the buffer remembers.
func (b *Buffer) SeenLimit() int {
	n := b.seenLimit
	if n <= 0 {
		n = DefaultSeenLimit
	}
	return max(n, b.Limit())
}

func (b *Buffer) index() map[string]struct{} {
	if b.seenSet == nil {
		b.seenSet = make(map[string]struct{}, len(b.seen))
		for _, id := range b.seen {
			b.seenSet[id] = struct{}{}
		}
	}
	return b.seenSet
}

// Add keeps a received signal and reports whether it was new. A signal whose ID was seen
// before is not kept (false): it is delivered once. A signal without an ID cannot be
// deduplicated and is always kept. When the buffer is full the oldest pending signal is
// dropped (its id stays remembered) and Dropped grows. Add does not validate e.
func (b *Buffer) Add(e Envelope) (added bool) {
	if e.ID != "" {
		idx := b.index()
		if _, dup := idx[e.ID]; dup {
			return false
		}
		idx[e.ID] = struct{}{}
		b.seen = append(b.seen, e.ID)
	}
	b.pending = append(b.pending, e)
	if over := len(b.pending) - b.Limit(); over > 0 {
		b.pending = append([]Envelope(nil), b.pending[over:]...)
		b.dropped += over
	}
	b.trimSeen()
	return true
}

// trimSeen forgets the oldest remembered ids beyond SeenLimit, keeping the ids of pending
// signals (there are at most Limit of those, and SeenLimit >= Limit).
func (b *Buffer) trimSeen() {
	over := len(b.seen) - b.SeenLimit()
	if over <= 0 {
		return
	}
	pending := make(map[string]struct{}, len(b.pending))
	for _, e := range b.pending {
		pending[e.ID] = struct{}{}
	}
	idx := b.index()
	kept := make([]string, 0, len(b.seen)-over)
	for _, id := range b.seen {
		if _, isPending := pending[id]; over > 0 && !isPending {
			delete(idx, id)
			over--
			continue
		}
		kept = append(kept, id)
	}
	b.seen = kept
}

// Take removes and returns the oldest pending signal for (name, key). The key matches
// exactly: an empty key matches signals with an empty key only.
func (b *Buffer) Take(name, key string) (Envelope, bool) {
	for i, e := range b.pending {
		if e.Name == name && e.Key == key {
			b.pending = append(b.pending[:i:i], b.pending[i+1:]...)
			return e, true
		}
	}
	return Envelope{}, false
}

// Rejection is a signal a wait refused because check failed (typically its payload does
// not match the wait's schema). It is consumed, not delivered.
type Rejection struct {
	// Envelope is the refused signal.
	Envelope Envelope `json:"envelope"`
	// Error is why, e.g. the schema messages.
	Error string `json:"error"`
}

// TakeValid is Take for a wait that checks what it takes: matching signals are tried
// oldest first, those that fail check are removed and returned as rejections (so they are
// recorded and the wait goes on), and the first that passes is removed and returned. A
// nil check accepts everything.
func (b *Buffer) TakeValid(name, key string, check func(Envelope) error) (e Envelope, rejected []Rejection, ok bool) {
	for {
		e, ok = b.Take(name, key)
		if !ok {
			return Envelope{}, rejected, false
		}
		if check == nil {
			return e, rejected, true
		}
		err := check(e)
		if err == nil {
			return e, rejected, true
		}
		rejected = append(rejected, Rejection{Envelope: e, Error: err.Error()})
	}
}

// Has reports whether a signal for (name, key) is pending.
func (b *Buffer) Has(name, key string) bool {
	for _, e := range b.pending {
		if e.Name == name && e.Key == key {
			return true
		}
	}
	return false
}

// Pending returns a copy of the pending signals, oldest first.
func (b *Buffer) Pending() []Envelope {
	return append([]Envelope(nil), b.pending...)
}

// Len is the number of pending signals.
func (b *Buffer) Len() int { return len(b.pending) }

// Seen reports whether a signal with this id was added (and is still remembered).
func (b *Buffer) Seen(id string) bool {
	if id == "" {
		return false
	}
	_, ok := b.index()[id]
	return ok
}

// Dropped is how many pending signals were dropped because the buffer was full.
func (b *Buffer) Dropped() int { return b.dropped }

// bufferJSON is the serialised form of a Buffer.
type bufferJSON struct {
	Limit     int        `json:"limit,omitempty"`
	SeenLimit int        `json:"seen_limit,omitempty"`
	Pending   []Envelope `json:"pending"`
	Seen      []string   `json:"seen"`
	Dropped   int        `json:"dropped,omitempty"`
}

// MarshalJSON implements json.Marshaler. It has a value receiver so that a Buffer held by
// value in a struct serialises too.
func (b Buffer) MarshalJSON() ([]byte, error) {
	return json.Marshal(bufferJSON{
		Limit: b.limit, SeenLimit: b.seenLimit, Dropped: b.dropped,
		Pending: nonNil(b.pending), Seen: nonNil(b.seen),
	})
}

// UnmarshalJSON implements json.Unmarshaler. It refuses negative counts and duplicate
// remembered ids, and applies the bounds to what it reads.
func (b *Buffer) UnmarshalJSON(data []byte) error {
	var j bufferJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.Limit < 0 || j.SeenLimit < 0 || j.Dropped < 0 {
		return fmt.Errorf("signals: buffer: negative limit or count")
	}
	nb := Buffer{limit: j.Limit, seenLimit: j.SeenLimit, dropped: j.Dropped}
	idx := nb.index()
	for _, id := range j.Seen {
		if _, dup := idx[id]; dup || id == "" {
			return fmt.Errorf("signals: buffer: remembered id %q is empty or repeated", id)
		}
		idx[id] = struct{}{}
		nb.seen = append(nb.seen, id)
	}
	for _, e := range j.Pending {
		if _, ok := idx[e.ID]; e.ID != "" && !ok {
			// A pending signal's id is always remembered; restore it.
			idx[e.ID] = struct{}{}
			nb.seen = append(nb.seen, e.ID)
		}
	}
	nb.pending = j.Pending
	if over := len(nb.pending) - nb.Limit(); over > 0 {
		nb.pending = nb.pending[over:]
		nb.dropped += over
	}
	nb.trimSeen()
	*b = nb
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
