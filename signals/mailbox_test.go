package signals

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func TestMailboxDeliversToWaitingAndLaterRuns(t *testing.T) {
	m := NewMailbox("deploy-done", "v1.2.3", time.Hour)
	assert.Empty(t, m.Subscribe("run-b", time.Time{}, t0))
	assert.Empty(t, m.Subscribe("run-a", time.Time{}, t0))
	assert.Equal(t, []string{"run-a", "run-b"}, m.Subscribers())

	e := sig("deploy-done", "v1.2.3", "s1")
	require.True(t, m.Post(e, t0.Add(time.Minute)))
	assert.Equal(t, []string{"run-a", "run-b"}, m.Deliveries(e), "both waiting runs, sorted")
	m.MarkDelivered("run-a", "s1")
	m.MarkDelivered("run-b", "s1")
	assert.Empty(t, m.Deliveries(e), "MarkDelivered prevents re-delivery")

	// A run that starts waiting later, within retention, gets the kept signal once.
	got := m.Subscribe("run-c", time.Time{}, t0.Add(30*time.Minute))
	assert.Equal(t, []string{"s1"}, ids(got))
	assert.Empty(t, m.Subscribe("run-c", time.Time{}, t0.Add(31*time.Minute)), "not twice")
	assert.Empty(t, m.Deliveries(e))

	// Exactly at the end of retention it is still kept; after it, it is not.
	assert.Equal(t, []string{"s1"}, ids(m.Subscribe("run-d", time.Time{}, t0.Add(61*time.Minute))))
	assert.Empty(t, m.Subscribe("run-e", time.Time{}, t0.Add(61*time.Minute+time.Nanosecond)))
}

func TestMailboxPostRules(t *testing.T) {
	m := NewMailbox("n", "k", time.Hour)
	tests := []struct {
		name string
		env  Envelope
		want bool
	}{
		{"first", sig("n", "k", "1"), true},
		{"repeat id", sig("n", "k", "1"), false},
		{"no id", sig("n", "k", ""), false},
		{"other name", sig("x", "k", "2"), false},
		{"other key", sig("n", "K", "3"), false},
		{"second", sig("n", "k", "4"), true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, m.Post(tt.env, t0), tt.name)
	}
	assert.Equal(t, []string{"1", "4"}, ids(m.Kept(t0)))
	assert.Nil(t, m.Deliveries(sig("n", "k", "nope")), "not kept")

	// After expiry the id is forgotten and accepted again.
	assert.Equal(t, 2, m.Expire(t0.Add(2*time.Hour)))
	assert.True(t, m.Post(sig("n", "k", "1"), t0.Add(2*time.Hour)))
}

func TestMailboxSince(t *testing.T) {
	m := NewMailbox("n", "", time.Hour)
	m.Post(sig("n", "", "old"), t0)
	m.Post(sig("n", "", "new"), t0.Add(10*time.Minute))
	assert.Equal(t, []string{"new"}, ids(m.Subscribe("r", t0.Add(5*time.Minute), t0.Add(15*time.Minute))))
	late := sig("n", "", "late")
	m.Post(late, t0.Add(20*time.Minute))
	m.Subscribe("future", t0.Add(30*time.Minute), t0.Add(20*time.Minute))
	assert.Equal(t, []string{"r"}, m.Deliveries(late), "a run subscribed since a later time does not get it")
}

func TestMailboxUnsubscribeKeepsDeliveryRecord(t *testing.T) {
	m := NewMailbox("n", "k", time.Hour)
	m.Subscribe("r", time.Time{}, t0)
	e := sig("n", "k", "1")
	m.Post(e, t0)
	m.MarkDelivered("r", "1")
	m.MarkDelivered("r", "unknown") // ignored
	m.Unsubscribe("r")
	assert.Empty(t, m.Subscribers())
	assert.Empty(t, m.Deliveries(e))
	assert.Empty(t, m.Subscribe("r", time.Time{}, t0.Add(time.Minute)), "not delivered twice after resubscribing")
	assert.Nil(t, m.Subscribe("", time.Time{}, t0))
	assert.Equal(t, []string{"r"}, m.Subscribers())
}

func TestMailboxExpireAndIdle(t *testing.T) {
	m := NewMailbox("n", "k", time.Hour)
	assert.True(t, m.Idle(t0), "new mailbox")
	_, ok := m.NextExpiry()
	assert.False(t, ok)

	m.Post(sig("n", "k", "1"), t0)
	m.Post(sig("n", "k", "2"), t0.Add(30*time.Minute))
	assert.False(t, m.Idle(t0.Add(time.Minute)), "keeps a signal")
	next, ok := m.NextExpiry()
	require.True(t, ok)
	assert.Equal(t, t0.Add(time.Hour+time.Nanosecond), next)

	assert.Equal(t, 0, m.Expire(t0.Add(time.Hour)))
	assert.Equal(t, 1, m.Expire(next))
	assert.Equal(t, []string{"2"}, ids(m.Kept(next)))
	assert.Equal(t, 0, m.Expire(next), "nothing more")

	m.Subscribe("r", time.Time{}, next)
	assert.False(t, m.Idle(t0.Add(3*time.Hour)), "a subscriber keeps it alive")
	m.Unsubscribe("r")
	assert.True(t, m.Idle(t0.Add(3*time.Hour)), "idle once signals are past retention, even before Expire")
	assert.Equal(t, 1, m.Expire(t0.Add(3*time.Hour)))
	assert.True(t, m.Idle(t0.Add(3*time.Hour)))
}

func TestMailboxBoundAndDefaults(t *testing.T) {
	m := NewMailbox("n", "k", 0)
	assert.Equal(t, DefaultRetention, m.Retention)
	assert.Equal(t, DefaultRetention, (&Mailbox{}).retention())
	for i := range DefaultMailboxLimit + 3 {
		require.True(t, m.Post(sig("n", "k", fmt.Sprint(i)), t0))
	}
	kept := m.Kept(t0)
	assert.Len(t, kept, DefaultMailboxLimit)
	assert.Equal(t, "3", kept[0].ID)
	assert.Equal(t, 3, m.Dropped())
}

func TestMailboxJSONRoundTrip(t *testing.T) {
	m := NewMailbox("deploy-done", "v1", time.Hour)
	m.Subscribe("run-b", t0, t0)
	m.Subscribe("run-a", time.Time{}, t0)
	e := sig("deploy-done", "v1", "s1")
	m.Post(e, t0.Add(time.Minute))
	m.MarkDelivered("run-b", "s1")

	data, err := json.Marshal(m)
	require.NoError(t, err)
	var back Mailbox
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, "deploy-done", back.Name)
	assert.Equal(t, "v1", back.Key)
	assert.Equal(t, time.Hour, back.Retention)
	assert.Equal(t, []string{"run-a", "run-b"}, back.Subscribers())
	assert.Equal(t, []string{"run-a"}, back.Deliveries(e), "delivery record survives")
	assert.False(t, back.Post(e, t0.Add(2*time.Minute)), "dedupe survives")
	again, err := json.Marshal(back) // by value
	require.NoError(t, err)
	assert.JSONEq(t, string(data), string(again))
	var raw struct {
		Subscribers []struct {
			RunID string `json:"run_id"`
		} `json:"subscribers"`
	}
	require.NoError(t, json.Unmarshal(data, &raw))
	require.Len(t, raw.Subscribers, 2)
	assert.Equal(t, "run-a", raw.Subscribers[0].RunID, "subscribers written sorted")

	for _, bad := range []string{
		`{"kept":[{"envelope":{"name":"n","id":""}}]}`,
		`{"kept":[{"envelope":{"id":"x"}},{"envelope":{"id":"x"}}]}`,
		`{"subscribers":[{"run_id":""}]}`,
		`{"subscribers":[{"run_id":"a"},{"run_id":"a"}]}`,
		`{"dropped":-1}`,
	} {
		assert.Error(t, json.Unmarshal([]byte(bad), &back), bad)
	}
}

func TestMailboxID(t *testing.T) {
	tests := []struct {
		name, key, want string
	}{
		{"deploy-done", "v1.2.3", "gateflow-mailbox/deploy-done/v1.2.3"},
		{"deploy-done", "", "gateflow-mailbox/deploy-done/"},
		{"ci/finished", "main", "gateflow-mailbox/ci/finished/main"},
		{"ci", "finished/main", "gateflow-mailbox/ci/finished%2Fmain"},
		{"n", "a b?#%", "gateflow-mailbox/n/a%20b%3F%23%25"},
		{"n", "é", "gateflow-mailbox/n/%C3%A9"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, MailboxID(tt.name, tt.key), "%s/%s", tt.name, tt.key)
	}
	long := strings.Repeat("é", 200) // 1200 bytes escaped
	id := MailboxID("n", long)
	assert.Regexp(t, `^gateflow-mailbox/n/%sha256:[0-9a-f]{64}$`, id)
	assert.NotEqual(t, id, MailboxID("n", long[:len(long)-2]+"è"))
	assert.LessOrEqual(t, len(MailboxID(strings.Repeat("a", 200), strings.Repeat("/", 200))), 1000)
}
