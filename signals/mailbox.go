package signals

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"time"
)

// Mailbox defaults and naming.
const (
	// DefaultRetention is how long a mailbox keeps a signal for runs that start waiting
	// later, when no retention is given.
	DefaultRetention = 24 * time.Hour
	// DefaultMailboxLimit is how many signals a mailbox keeps; beyond it the oldest is
	// dropped.
	DefaultMailboxLimit = 1000
	// MailboxIDPrefix starts every mailbox workflow ID.
	MailboxIDPrefix = "gateflow-mailbox/"
	// maxEscapedKey is the longest escaped key put in a mailbox ID as is; longer keys
	// are hashed so the ID stays within Temporal's default ID length limit (1000).
	maxEscapedKey = 600
)

// MailboxID is the workflow ID of the mailbox for (name, key):
// "gateflow-mailbox/" + name + "/" + url.PathEscape(key). The key's "/" is escaped and
// names cannot contain "%", so distinct (name, key) pairs give distinct IDs; a key whose
// escaped form is longer than 600 bytes is replaced by "%sha256:" and its hex SHA-256,
// which no escaped key can spell.
func MailboxID(name, key string) string {
	k := url.PathEscape(key)
	if len(k) > maxEscapedKey {
		sum := sha256.Sum256([]byte(key))
		k = "%sha256:" + hex.EncodeToString(sum[:])
	}
	return MailboxIDPrefix + name + "/" + k
}

// Mailbox is the state of the entity workflow for one (name, key). It keeps posted
// signals for Retention, delivers each to every subscribed run once, and hands the kept
// signals a run has not had to a run that subscribes later. Deduplication by ID holds
// while a signal is kept: an ID seen again after its signal expired is accepted again.
//
// Time is always passed in (workflow time), and everything that lists runs or signals
// does so in a fixed order, so the entity workflow replays deterministically. A Mailbox
// serialises to JSON for continue-as-new.
type Mailbox struct {
	// Name is the signal name the mailbox serves.
	Name string
	// Key is the signal key the mailbox serves.
	Key string
	// Retention is how long a posted signal is kept; zero or negative means
	// DefaultRetention.
	Retention time.Duration

	kept    []keptSignal
	subs    map[string]time.Time // run ID -> since
	dropped int
}

// keptSignal is a posted signal with the runs it has been delivered to.
type keptSignal struct {
	Envelope    Envelope  `json:"envelope"`
	PostedAt    time.Time `json:"posted_at"`
	DeliveredTo []string  `json:"delivered_to,omitempty"` // sorted run IDs
}

func (k *keptSignal) delivered(runID string) bool {
	_, found := slices.BinarySearch(k.DeliveredTo, runID)
	return found
}

func (k *keptSignal) markDelivered(runID string) {
	if i, found := slices.BinarySearch(k.DeliveredTo, runID); !found {
		k.DeliveredTo = slices.Insert(k.DeliveredTo, i, runID)
	}
}

// NewMailbox returns an empty mailbox for (name, key) keeping signals for retention (zero
// or negative means DefaultRetention).
func NewMailbox(name, key string, retention time.Duration) *Mailbox {
	if retention <= 0 {
		retention = DefaultRetention
	}
	return &Mailbox{Name: name, Key: key, Retention: retention}
}

func (m *Mailbox) retention() time.Duration {
	if m.Retention <= 0 {
		return DefaultRetention
	}
	return m.Retention
}

// alive reports whether a signal posted at postedAt is still kept at now: it is kept for
// Retention, inclusive.
func (m *Mailbox) alive(postedAt, now time.Time) bool {
	return now.Sub(postedAt) <= m.retention()
}

func (m *Mailbox) find(id string) *keptSignal {
	for i := range m.kept {
		if m.kept[i].Envelope.ID == id {
			return &m.kept[i]
		}
	}
	return nil
}

// Post keeps a signal posted at now and reports whether it was new. It is refused (false)
// when its ID is empty (the sender assigns one), when it is for another (name, key), or
// when a kept signal has the same ID (a repeat is delivered once). Past
// DefaultMailboxLimit kept signals the oldest is dropped and Dropped grows. After a
// successful Post, Deliveries says which runs to send it to.
func (m *Mailbox) Post(e Envelope, now time.Time) (added bool) {
	if e.ID == "" || e.Name != m.Name || e.Key != m.Key || m.find(e.ID) != nil {
		return false
	}
	m.kept = append(m.kept, keptSignal{Envelope: e, PostedAt: now})
	if over := len(m.kept) - DefaultMailboxLimit; over > 0 {
		m.kept = append([]keptSignal(nil), m.kept[over:]...)
		m.dropped += over
	}
	return true
}

// Subscribe records that runID waits on this mailbox and returns, oldest first, the kept
// signals it has not had yet: posted at or after since (zero since means any), and still
// within retention at now. The returned signals count as delivered to runID (the caller
// hands them over in the same step, e.g. as the Update's result). Subscribing again
// updates since and returns only what the run has not had. An empty runID is ignored.
func (m *Mailbox) Subscribe(runID string, since time.Time, now time.Time) []Envelope {
	if runID == "" {
		return nil
	}
	if m.subs == nil {
		m.subs = map[string]time.Time{}
	}
	m.subs[runID] = since
	var out []Envelope
	for i := range m.kept {
		k := &m.kept[i]
		if !m.alive(k.PostedAt, now) || k.PostedAt.Before(since) || k.delivered(runID) {
			continue
		}
		k.markDelivered(runID)
		out = append(out, k.Envelope)
	}
	return out
}

// Unsubscribe forgets that runID waits. What it was delivered stays recorded while the
// signals are kept, so subscribing again does not deliver them twice.
func (m *Mailbox) Unsubscribe(runID string) {
	delete(m.subs, runID)
}

// Subscribers returns the subscribed run IDs, sorted.
func (m *Mailbox) Subscribers() []string {
	out := make([]string, 0, len(m.subs))
	for id := range m.subs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Deliveries returns, sorted, the subscribed runs that should get the kept signal with
// e's ID: those that have not had it and subscribed with a since not after its posting.
// It returns nil for a signal that is not kept. Deliveries does not mark anything; call
// MarkDelivered once each send has succeeded.
func (m *Mailbox) Deliveries(e Envelope) []string {
	k := m.find(e.ID)
	if k == nil || e.ID == "" {
		return nil
	}
	var out []string
	for _, runID := range m.Subscribers() {
		if !k.delivered(runID) && !k.PostedAt.Before(m.subs[runID]) {
			out = append(out, runID)
		}
	}
	return out
}

// MarkDelivered records that runID has had the kept signal id, so neither Deliveries nor
// Subscribe offers it to that run again. Unknown ids are ignored.
func (m *Mailbox) MarkDelivered(runID, id string) {
	if k := m.find(id); k != nil && id != "" {
		k.markDelivered(runID)
	}
}

// Expire drops the signals older than Retention at now and returns how many it dropped.
func (m *Mailbox) Expire(now time.Time) int {
	kept := m.kept[:0]
	n := 0
	for _, k := range m.kept {
		if m.alive(k.PostedAt, now) {
			kept = append(kept, k)
		} else {
			n++
		}
	}
	clear(m.kept[len(kept):])
	m.kept = kept
	return n
}

// NextExpiry returns when the oldest kept signal expires (the entity workflow sets a
// timer for it), and false when nothing is kept.
func (m *Mailbox) NextExpiry() (time.Time, bool) {
	if len(m.kept) == 0 {
		return time.Time{}, false
	}
	first := m.kept[0].PostedAt
	for _, k := range m.kept[1:] {
		if k.PostedAt.Before(first) {
			first = k.PostedAt
		}
	}
	return first.Add(m.retention()).Add(time.Nanosecond), true
}

// Idle reports whether the mailbox has no subscribers and keeps no signal still within
// retention at now: the entity workflow can end.
func (m *Mailbox) Idle(now time.Time) bool {
	if len(m.subs) > 0 {
		return false
	}
	for _, k := range m.kept {
		if m.alive(k.PostedAt, now) {
			return false
		}
	}
	return true
}

// Kept returns the signals kept at now (within retention), oldest first.
func (m *Mailbox) Kept(now time.Time) []Envelope {
	var out []Envelope
	for _, k := range m.kept {
		if m.alive(k.PostedAt, now) {
			out = append(out, k.Envelope)
		}
	}
	return out
}

// Dropped is how many signals were dropped because the mailbox was full.
func (m *Mailbox) Dropped() int { return m.dropped }

// mailboxJSON is the serialised form of a Mailbox.
type mailboxJSON struct {
	Name        string          `json:"name"`
	Key         string          `json:"key"`
	Retention   time.Duration   `json:"retention"`
	Kept        []keptSignal    `json:"kept"`
	Subscribers []subscriberRec `json:"subscribers"`
	Dropped     int             `json:"dropped,omitempty"`
}

type subscriberRec struct {
	RunID string    `json:"run_id"`
	Since time.Time `json:"since,omitzero"`
}

// MarshalJSON implements json.Marshaler; subscribers are written sorted by run ID. It
// has a value receiver so that a Mailbox held by value in a struct serialises too.
func (m Mailbox) MarshalJSON() ([]byte, error) {
	j := mailboxJSON{Name: m.Name, Key: m.Key, Retention: m.Retention, Kept: nonNil(m.kept),
		Subscribers: []subscriberRec{}, Dropped: m.dropped}
	for _, id := range m.Subscribers() {
		j.Subscribers = append(j.Subscribers, subscriberRec{RunID: id, Since: m.subs[id]})
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler. It refuses repeated or empty IDs among kept
// signals and subscribers.
func (m *Mailbox) UnmarshalJSON(data []byte) error {
	var j mailboxJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.Dropped < 0 {
		return fmt.Errorf("signals: mailbox: negative drop count")
	}
	nm := Mailbox{Name: j.Name, Key: j.Key, Retention: j.Retention, dropped: j.Dropped}
	ids := map[string]bool{}
	for _, k := range j.Kept {
		if k.Envelope.ID == "" || ids[k.Envelope.ID] {
			return fmt.Errorf("signals: mailbox: kept signal id %q is empty or repeated", k.Envelope.ID)
		}
		ids[k.Envelope.ID] = true
		k.DeliveredTo = slices.Compact(slices.Sorted(slices.Values(k.DeliveredTo)))
		nm.kept = append(nm.kept, k)
	}
	for _, s := range j.Subscribers {
		if s.RunID == "" {
			return fmt.Errorf("signals: mailbox: subscriber without a run id")
		}
		if _, dup := nm.subs[s.RunID]; dup {
			return fmt.Errorf("signals: mailbox: subscriber %q repeated", s.RunID)
		}
		if nm.subs == nil {
			nm.subs = map[string]time.Time{}
		}
		nm.subs[s.RunID] = s.Since
	}
	*m = nm
	return nil
}
