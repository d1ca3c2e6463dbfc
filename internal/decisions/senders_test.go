package decisions

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// message is one message a person sends to a run, read the way the run reads it: the
// SDK's default data converter decoding a json/plain payload into the handler's type.
type message struct {
	signal bool
	name   string
	field  string
	// fields are the JSON keys of the payload type; sample a valid payload.
	fields []string
	sample any
	// decode is the run's reading: the SDK decodes the payload and the run takes by.
	decode func(*commonpb.Payload) (string, error)
}

func runReads[T any](by func(T) string) func(*commonpb.Payload) (string, error) {
	return func(p *commonpb.Payload) (string, error) {
		var v T
		if err := converter.GetDefaultDataConverter().FromPayload(p, &v); err != nil {
			return "", err
		}
		return by(v), nil
	}
}

var messages = []message{
	{false, protocol.UpdateApproval, "by", []string{"gate", "vote", "by", "comment", "arguments", "at", "proof", "verified"},
		approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice", Comment: "ok", At: time.Unix(5, 0).UTC(), Verified: &auth.Verified{By: "alice", KeyID: "k"}},
		runReads(func(v approval.Vote) string { return v.By })},
	{false, protocol.UpdateInput, "by", []string{"name", "data", "by", "proof"},
		protocol.InputAnswer{Name: "notes", Data: json.RawMessage(`{"By":"x","by":"y"}`), By: "alice", Proof: "p"},
		runReads(func(v protocol.InputAnswer) string { return v.By })},
	{false, protocol.UpdateBudget, "by", []string{"to", "by", "proof"}, protocol.BudgetRaise{To: "5", By: "alice"},
		runReads(func(v protocol.BudgetRaise) string { return v.By })},
	{false, protocol.UpdatePause, "by", []string{"action", "by", "reason", "proof"}, protocol.RunPause{Action: "pause", By: "alice", Reason: "r"},
		runReads(func(v protocol.RunPause) string { return v.By })},
	{false, protocol.UpdateCancel, "by", []string{"by", "reason", "proof"}, protocol.RunCancel{By: "alice", Reason: "r"},
		runReads(func(v protocol.RunCancel) string { return v.By })},
	{true, protocol.SignalApproval, "by", []string{"gate", "vote", "by", "comment", "arguments", "at", "proof", "verified"},
		approval.Vote{Gate: "ship", Kind: approval.Reject, By: "alice"},
		runReads(func(v approval.Vote) string { return v.By })},
	{true, protocol.SignalCancel, "by", []string{"by", "reason"}, protocol.CancelReason{By: "alice", Reason: "r"},
		runReads(func(v protocol.CancelReason) string { return v.By })},
	{true, protocol.SignalName, "sender", []string{"name", "key", "id", "payload", "sender", "sent_at"},
		signals.Envelope{Name: "deploy-done", Key: "k", ID: "i", Payload: json.RawMessage(`{"a":1}`), Sender: "alice", SentAt: time.Unix(9, 0).UTC()},
		runReads(func(v signals.Envelope) string { return v.Sender })},
}

func (m message) claim(data []byte) (Claim, bool, error) {
	if m.signal {
		return SignalClaim(m.name, data)
	}
	return UpdateClaim(m.name, data)
}

func jsonPayload(data []byte) *commonpb.Payload {
	return &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: data}
}

// TestMessagesRoundTrip: what the SDK encodes, the run and the Authorizer read back, the
// same person.
func TestMessagesRoundTrip(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	for _, m := range messages {
		t.Run(m.name, func(t *testing.T) {
			p, err := dc.ToPayload(m.sample)
			require.NoError(t, err)
			c, ok, err := m.claim(p.GetData())
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, Claim{Field: m.field, By: "alice", Required: m.field == "by"}, c)
			by, err := m.decode(p)
			require.NoError(t, err)
			assert.Equal(t, "alice", by)
		})
	}
}

func TestClaimRefusesForgeries(t *testing.T) {
	for _, m := range messages {
		upper := strings.ToUpper(m.field[:1]) + m.field[1:]
		for _, forged := range []string{
			fmt.Sprintf(`{%q:"mallory",%q:"alice"}`, m.field, upper),
			fmt.Sprintf(`{%q:"alice",%q:"mallory"}`, upper, m.field),
			fmt.Sprintf(`{%q:"mallory",%q:"alice"}`, m.field, m.field),
			fmt.Sprintf(`{%q:"alice"}`, strings.ToUpper(m.field)),
			fmt.Sprintf(`{%q:"mallory","unknown":1}`, m.field),
		} {
			_, ok, err := m.claim([]byte(forged))
			assert.True(t, ok)
			assert.ErrorContains(t, err, "cannot be read one way only: ", "%s %s", m.name, forged)
			_, err = m.decode(jsonPayload([]byte(forged)))
			assert.Error(t, err, "the run refuses %s %s too", m.name, forged)
		}
		for _, notObject := range []string{``, `null`, `"alice"`, `[{"by":"alice"}]`, `1`} {
			_, _, err := m.claim([]byte(notObject))
			assert.ErrorIs(t, err, ErrNotJSONObject, "%s %q", m.name, notObject)
		}
	}
	_, ok, err := UpdateClaim("custom", []byte(`{"By":1}`))
	assert.False(t, ok)
	assert.NoError(t, err)
	_, ok, _ = SignalClaim(protocol.SignalPermit, nil)
	assert.False(t, ok)
	assert.True(t, IsDecisionUpdate(protocol.UpdateBudget))
	assert.False(t, IsDecisionUpdate(protocol.SignalName))
	assert.True(t, IsClaimSignal(protocol.SignalName))
	assert.False(t, IsClaimSignal(protocol.UpdateBudget))
}

// TestRandomPayloadsAreReadOneWay is the property of issue 31 over many generated
// payloads of every message: keys drawn from the type's own names, their case variants,
// repeats and unknown keys. Whenever a key is repeated or not exactly a field name, the
// Authorizer's reading refuses the payload; whenever it accepts one claiming S, the run
// reads S too (or refuses it).
func TestRandomPayloadsAreReadOneWay(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	values := []string{`"alice"`, `"mallory"`, `""`, `1`, `null`, `{}`, `"2026-01-01T00:00:00Z"`, `"approve"`}
	for _, m := range messages {
		keys := append([]string{}, m.fields...)
		for _, f := range m.fields {
			keys = append(keys, strings.ToUpper(f), strings.ToUpper(f[:1])+f[1:])
		}
		keys = append(keys, "x", m.field, m.field)
		refusedForm, accepted := 0, 0
		for range 4000 {
			n := 1 + rng.IntN(5)
			seen, bad := map[string]bool{}, false
			parts := make([]string, 0, n)
			for range n {
				k := keys[rng.IntN(len(keys))]
				bad = bad || seen[k] || !contains(m.fields, k)
				seen[k] = true
				parts = append(parts, fmt.Sprintf("%q:%s", k, values[rng.IntN(len(values))]))
			}
			data := []byte("{" + strings.Join(parts, ",") + "}")
			c, _, err := m.claim(data)
			if bad {
				require.Error(t, err, "%s %s", m.name, data)
				refusedForm++
				continue
			}
			if err != nil {
				continue // a value of the wrong type
			}
			accepted++
			by, rerr := m.decode(jsonPayload(data))
			if rerr == nil {
				require.Equal(t, c.By, by, "%s %s", m.name, data)
			}
		}
		assert.Greater(t, refusedForm, 500, m.name)
		assert.Greater(t, accepted, 50, m.name)
	}
}

func contains(s []string, k string) bool {
	for _, x := range s {
		if x == k {
			return true
		}
	}
	return false
}

// FuzzClaims: whatever the bytes, if the Authorizer's reading accepts a message claiming
// S, the run's reading of the same bytes (the SDK's data converter into the handler's
// type) fails or yields S; and a payload with a duplicate or case-variant key is always
// refused.
func FuzzClaims(f *testing.F) {
	for i, m := range messages {
		p, err := converter.GetDefaultDataConverter().ToPayload(m.sample)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), p.GetData())
	}
	f.Add(uint8(0), []byte(`{"gate":"ship","vote":"approve","by":"mallory","By":"alice"}`))
	f.Add(uint8(1), []byte(`{"name":"n","data":{"a":1},"by":"mallory","bY":"alice"}`))
	f.Add(uint8(7), []byte(`{"name":"n","sender":"mallory","\u0053ender":"alice"}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		m := messages[int(which)%len(messages)]
		c, ok, err := m.claim(data)
		if !ok {
			t.Fatalf("%s is a message with a claim", m.name)
		}
		if err != nil {
			return
		}
		if by, rerr := m.decode(jsonPayload(data)); rerr == nil && by != c.By {
			t.Fatalf("%s %q: the Authorizer reads %q, the run %q", m.name, data, c.By, by)
		}
		if dup := repeatedOrVariantKey(data, m.fields); dup != "" {
			t.Fatalf("%s %q: accepted with the key %q", m.name, data, dup)
		}
	})
}

// repeatedOrVariantKey returns a top-level key of the object data that is repeated or not
// exactly one of fields ("" when there is none), read independently of package strictjson.
func repeatedOrVariantKey(data []byte, fields []string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if _, err := dec.Token(); err != nil {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		k, _ := tok.(string)
		if seen[k] || !contains(fields, k) {
			return k
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}
