package flow

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/runs"
)

// The test environment's namespace and the run's ID, which signed decisions name.
const (
	testNamespace = "default-test-namespace"
	testRun       = "ship-1"
	// testFirstRun is the run ID of the test environment's run: it names no first run ID,
	// so the run binds its own run ID (run_auth.go).
	testFirstRun = "default-test-run-id"
)

var authT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

type authKeys struct {
	alice, bob, mallory auth.Key
	policy              *auth.Policy
}

func newAuthKeys(t *testing.T, required bool) authKeys {
	t.Helper()
	var k authKeys
	var err error
	k.alice, err = auth.NewKey("alice-1", "alice")
	require.NoError(t, err)
	k.bob, err = auth.NewKey("bob-1", "bob")
	require.NoError(t, err)
	k.mallory, err = auth.NewKey("mallory-1", "mallory") // not in the directory
	require.NoError(t, err)
	dir, err := auth.NewDirectory(k.alice.Public(), k.bob.Public())
	require.NoError(t, err)
	k.policy = &auth.Policy{Required: required, Directory: dir}
	return k
}

// signedVote is v with a proof signed by key for run, issued at.
func signedVote(t *testing.T, key auth.Key, run string, v approval.Vote, at time.Time) approval.Vote {
	t.Helper()
	return signedVoteIn(t, key, run, testFirstRun, v, at)
}

// signedVoteIn is signedVote for the run whose first run ID is firstRun.
func signedVoteIn(t *testing.T, key auth.Key, run, firstRun string, v approval.Vote, at time.Time) approval.Vote {
	t.Helper()
	d, err := decisions.Vote(testNamespace, run, v)
	require.NoError(t, err)
	d.FirstRunID = firstRun
	if d.By != key.Owner { // a forger signs their own decision and sends it as someone else's
		own := v
		own.By = key.Owner
		d, err = decisions.Vote(testNamespace, run, own)
		require.NoError(t, err)
		d.FirstRunID = firstRun
	}
	tok, err := auth.Sign(key, d, auth.SignOptions{Now: at})
	require.NoError(t, err)
	v.Proof = tok
	return v
}

func newAuthEnv(t *testing.T, k authKeys) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newUnitEnv(t, runConfig{directory: peopleDir, auth: k.policy}, gateFlow)
	env.SetStartTime(authT0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testRun})
	return env
}

// TestSignedDecisionsRequired: with proofs required, every forgery is refused by the
// Validator (so it never enters history), a Signal vote is refused, and alice's genuine
// signed vote counts, recorded as verified with her key.
func TestSignedDecisionsRequired(t *testing.T) {
	k := newAuthKeys(t, true)
	env := newAuthEnv(t, k)
	approve := approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"}
	at := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	now := func(m int) time.Time { return authT0.Add(at(m)) }

	unsigned := voteAt(env, at(1), approve)
	forgedVerified := approve
	forgedVerified.Verified = &auth.Verified{By: "alice", KeyID: "alice-1", Method: auth.MethodSignature}
	claimsVerified := voteAt(env, at(2), forgedVerified)
	bobAsAlice := voteAt(env, at(3), signedVote(t, k.bob, testRun, approve, now(3)))
	otherRun := voteAt(env, at(4), signedVote(t, k.alice, "ship-2", approve, now(4)))
	earlierRun := voteAt(env, at(5), signedVoteIn(t, k.alice, testRun, "an-earlier-run", approve, now(5)))
	expired := voteAt(env, at(30), signedVote(t, k.alice, testRun, approve, now(5)))
	stranger := voteAt(env, at(31), signedVote(t, k.mallory, testRun, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "mallory"}, now(31)))
	signalAt(env, at(32), protocol.SignalApproval, signedVote(t, k.alice, testRun, approve, now(32)))
	refusedSoFar := stateAt(t, env, at(33))
	genuine := voteAt(env, at(34), signedVote(t, k.alice, testRun, approve, now(34)))

	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice", "bob", "mallory"}}})
	assert.Equal(t, approval.Approved, out.Decision.Outcome)

	for name, o := range map[string]*updateOutcome{"unsigned": unsigned, "forged verified": claimsVerified} {
		assert.ErrorContains(t, o.refusal(t), "vote on ship by alice: no proof: this run accepts signed decisions only", name)
	}
	assert.ErrorContains(t, bobAsAlice.refusal(t), "decision refused (not_owner): key bob-1 belongs to bob, the decision claims alice")
	assert.ErrorContains(t, otherRun.refusal(t), `decision refused (mismatch): the token signs run "ship-2", not "ship-1"`)
	assert.ErrorContains(t, earlierRun.refusal(t), `decision refused (mismatch): the token signs run "an-earlier-run" of "ship-1", not "default-test-run-id": another run with the same workflow ID`)
	assert.ErrorContains(t, expired.refusal(t), "decision refused (expired)")
	assert.ErrorContains(t, stranger.refusal(t), `decision refused (unknown_key): key "mallory-1" is not in the run's directory`)
	require.Len(t, refusedSoFar.Refused, 1)
	assert.Equal(t, runs.RefusedVote, refusedSoFar.Refused[0].Kind)
	assert.Contains(t, refusedSoFar.Refused[0].Reason, "votes sent as Signals are refused")

	assert.Equal(t, approval.VoteStatus(approval.Approved), genuine.vote(t).Status)
	st := queryState(t, env)
	require.NotNil(t, st.Auth)
	assert.Equal(t, runs.Auth{Required: true, KeyIDs: []string{"alice-1", "bob-1"}}, *st.Auth)
	require.Len(t, st.Gates, 1)
	votes := st.Gates[0].Votes
	require.Len(t, votes, 1)
	require.NotNil(t, votes[0].Verified, "the counted vote is recorded as verified")
	assert.Equal(t, "alice-1", votes[0].Verified.KeyID)
	assert.Equal(t, auth.MethodSignature, votes[0].Verified.Method)
	assert.Empty(t, votes[0].Proof, "the state keeps the verdict, not the token")
}

// TestSignedDecisionOptional: without Required, an unsigned vote counts unverified (and a
// Verified the sender wrote is dropped), a signed one counts verified, and the same proof
// does not count twice.
func TestSignedDecisionOptional(t *testing.T) {
	k := newAuthKeys(t, false)
	env := newAuthEnv(t, k)
	forged := approval.Vote{Gate: "ship", Kind: approval.Approve, By: "carol",
		Verified: &auth.Verified{By: "carol", KeyID: "carol-1", Method: auth.MethodSignature}}
	first := voteAt(env, time.Minute, forged)
	alice := signedVote(t, k.alice, testRun, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice"}, authT0.Add(2*time.Minute))
	second := voteAt(env, 2*time.Minute, alice)
	again := voteAt(env, 3*time.Minute, alice)
	bobVote := voteAt(env, 4*time.Minute, signedVote(t, k.bob, testRun, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "bob"}, authT0.Add(4*time.Minute)))

	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice", "bob", "group:release"}, Required: 3}})
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	first.vote(t)
	second.vote(t)
	bobVote.vote(t)
	assert.ErrorContains(t, again.refusal(t), "this signed decision was used already")
	st := queryState(t, env)
	require.Len(t, st.Gates, 1)
	by := map[string]*auth.Verified{}
	for _, v := range st.Gates[0].Votes {
		by[v.By] = v.Verified
	}
	require.Len(t, by, 3)
	assert.Nil(t, by["carol"], "an unsigned vote stays unverified whatever it claims")
	require.NotNil(t, by["alice"])
	assert.Equal(t, "alice-1", by["alice"].KeyID)
	require.NotNil(t, by["bob"])
}

// TestSignedAnswers: with proofs required, an unsigned answer and one signed with someone
// else's key are refused; carol's signed answer is accepted and recorded as verified. A
// proof signed for another answer (the payload hash differs) is refused.
func TestSignedAnswers(t *testing.T) {
	carol, err := auth.NewKey("carol-1", "carol")
	require.NoError(t, err)
	wendy, err := auth.NewKey("wendy-1", "wendy")
	require.NoError(t, err)
	dir, err := auth.NewDirectory(carol.Public(), wendy.Public())
	require.NoError(t, err)
	env := newUnitEnv(t, runConfig{directory: peopleDir, auth: &auth.Policy{Required: true, Directory: dir}}, notesFlow)
	env.SetStartTime(authT0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testRun})
	answer := func(key auth.Key, by, data string, signed string, m int) protocol.InputAnswer {
		a := protocol.InputAnswer{Name: "notes", Data: json.RawMessage(data), By: by}
		s := a
		s.By, s.Data = key.Owner, json.RawMessage(signed)
		d, err := decisions.Answer(testNamespace, testRun, s)
		require.NoError(t, err)
		d.FirstRunID = testFirstRun
		a.Proof, err = auth.Sign(key, d, auth.SignOptions{Now: authT0.Add(time.Duration(m) * time.Minute)})
		require.NoError(t, err)
		return a
	}
	unsigned := updateAt(env, time.Minute, protocol.UpdateInput, protocol.InputAnswer{Name: "notes", Data: json.RawMessage(goodNotes), By: "carol"})
	wendyAsCarol := updateAt(env, 2*time.Minute, protocol.UpdateInput, answer(wendy, "carol", goodNotes, goodNotes, 2))
	otherAnswer := updateAt(env, 3*time.Minute, protocol.UpdateInput, answer(carol, "carol", `{"summary":"Something else entirely","risk":"high"}`, goodNotes, 3))
	good := updateAt(env, 4*time.Minute, protocol.UpdateInput, answer(carol, "carol", `{ "risk":"low", "summary":"Fixes the login bug", "count":3 }`, goodNotes, 4))
	env.ExecuteWorkflow(notesFlow.Name(), notesIn{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.ErrorContains(t, unsigned.refusal(t), "input notes by carol: no proof: this run accepts signed decisions only")
	assert.ErrorContains(t, wendyAsCarol.refusal(t), "decision refused (not_owner): key wendy-1 belongs to wendy, the decision claims carol")
	assert.ErrorContains(t, otherAnswer.refusal(t), "decision refused (mismatch): the token signs another payload")
	good.value(t)
	st := queryState(t, env)
	require.Len(t, st.Inputs, 1)
	require.NotNil(t, st.Inputs[0].Answer)
	require.NotNil(t, st.Inputs[0].Answer.Verified, "the answer is recorded as verified")
	assert.Equal(t, "carol-1", st.Inputs[0].Answer.Verified.KeyID)
}

var sleepyFlow = Define("auth/sleepy", func(ctx *Context, _ none) (none, error) {
	return none{}, ctx.Sleep("wait", time.Hour)
}, MaxCostUSD(decimal.RequireFromString("1")))

// TestSignedBudgetRaiseAndPause: with proofs required, an unsigned budget raise or pause is
// refused, a raise whose proof signed another amount is refused, and signed ones apply.
func TestSignedBudgetRaiseAndPause(t *testing.T) {
	k := newAuthKeys(t, true)
	env := newUnitEnv(t, runConfig{auth: k.policy}, sleepyFlow)
	env.SetStartTime(authT0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testRun})
	sign := func(m int, d auth.Decision, err error) string {
		require.NoError(t, err)
		d.FirstRunID = testFirstRun
		tok, err := auth.Sign(k.alice, d, auth.SignOptions{Now: authT0.Add(time.Duration(m) * time.Minute)})
		require.NoError(t, err)
		return tok
	}
	raise := func(to string) protocol.BudgetRaise { return protocol.BudgetRaise{To: to, By: "alice"} }
	signedRaise := func(to, signedTo string, m int) protocol.BudgetRaise {
		r := raise(to)
		d, err := decisions.Budget(testNamespace, testRun, raise(signedTo))
		r.Proof = sign(m, d, err)
		return r
	}
	pause := func(action string, m int) protocol.RunPause {
		r := protocol.RunPause{Action: action, By: "alice", Reason: "hold on"}
		if action == protocol.ControlResume {
			r.Reason = ""
		}
		d, err := decisions.Pause(testNamespace, testRun, r)
		r.Proof = sign(m, d, err)
		return r
	}
	unsignedRaise := updateAt(env, time.Minute, protocol.UpdateBudget, raise("2"))
	otherAmount := updateAt(env, 2*time.Minute, protocol.UpdateBudget, signedRaise("3", "2", 2))
	goodRaise := updateAt(env, 3*time.Minute, protocol.UpdateBudget, signedRaise("2.00", "2", 3))
	unsignedPause := updateAt(env, 4*time.Minute, protocol.UpdatePause, protocol.RunPause{Action: protocol.ControlPause, By: "alice"})
	goodPause := updateAt(env, 5*time.Minute, protocol.UpdatePause, pause(protocol.ControlPause, 5))
	goodResume := updateAt(env, 6*time.Minute, protocol.UpdatePause, pause(protocol.ControlResume, 6))
	env.ExecuteWorkflow(sleepyFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.ErrorContains(t, unsignedRaise.refusal(t), "budget raise by alice: no proof: this run accepts signed decisions only")
	assert.ErrorContains(t, otherAmount.refusal(t), "decision refused (mismatch): the token signs another payload")
	goodRaise.value(t)
	assert.ErrorContains(t, unsignedPause.refusal(t), "pause by alice: no proof: this run accepts signed decisions only")
	goodPause.value(t)
	goodResume.value(t)
	st := queryState(t, env)
	require.NotNil(t, st.Budget)
	assert.Equal(t, "2", st.Budget.Cap.Amount.String(), "the signed raise applied")
}

// TestIdentityProviderTokenAsProof: a vote whose proof is a token of the trusted identity
// provider counts when the token's subject is the voter, and is refused for anyone else.
func TestIdentityProviderTokenAsProof(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	jwks := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "idp-1", Algorithm: "ES256", Use: "sig"}}}
	policy := &auth.Policy{Required: true, Issuer: &auth.Issuer{URL: "https://idp.test", Audience: "gateflow", Keys: jwks}}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "idp-1"}}, nil)
	require.NoError(t, err)
	token := func(sub string) string {
		tok, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: "https://idp.test", Subject: sub, Audience: jwt.Audience{"gateflow"},
			IssuedAt: jwt.NewNumericDate(authT0), Expiry: jwt.NewNumericDate(authT0.Add(30 * time.Minute))}).Serialize()
		require.NoError(t, err)
		return tok
	}
	sub, err := auth.TokenSubject(token("bob"))
	require.NoError(t, err)
	assert.Equal(t, "bob", sub)
	env := newUnitEnv(t, runConfig{directory: peopleDir, auth: policy}, gateFlow)
	env.SetStartTime(authT0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testRun})
	asAlice := voteAt(env, time.Minute, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "alice", Proof: token("bob")})
	bob := voteAt(env, 2*time.Minute, approval.Vote{Gate: "ship", Kind: approval.Approve, By: "bob", Proof: token("bob")})
	out := runGate(t, env, gateIn{Req: approval.Request{Approvers: []string{"alice", "bob"}}})
	assert.Equal(t, approval.Approved, out.Decision.Outcome)
	assert.ErrorContains(t, asAlice.refusal(t), `decision refused (not_owner): the token's subject is "bob", the decision claims "alice"`)
	bob.vote(t)
	st := queryState(t, env)
	require.Len(t, st.Gates, 1)
	require.Len(t, st.Gates[0].Votes, 1)
	v := st.Gates[0].Votes[0].Verified
	require.NotNil(t, v)
	assert.Equal(t, auth.MethodIdentityProvider, v.Method)
	assert.Equal(t, "https://idp.test", v.Issuer)
	assert.Equal(t, runs.Auth{Required: true, Issuer: "https://idp.test"}, *st.Auth)
}

// TestDecisionRules: the pinned policy's rules say who may raise a run's budget (a group of
// the worker's directory, or the run's creator) and who may pause it; anyone else is
// refused by the Validator with the rule, whether or not proofs are required.
func TestDecisionRules(t *testing.T) {
	k := newAuthKeys(t, false)
	k.policy.Rules = map[auth.Kind][]string{auth.KindBudget: {"group:release", "creator"}, auth.KindPause: {"dave"}}
	env := newUnitEnv(t, runConfig{directory: peopleDir, auth: k.policy}, sleepyFlow)
	env.SetStartTime(authT0)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: testRun})
	require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(searchattr.CreatedByKey.ValueSet("zed"))))
	mallory := updateAt(env, time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "2", By: "mallory"})
	carol := updateAt(env, 2*time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "2", By: "carol"})
	creator := updateAt(env, 3*time.Minute, protocol.UpdateBudget, protocol.BudgetRaise{To: "3", By: "zed"})
	carolPause := updateAt(env, 4*time.Minute, protocol.UpdatePause, protocol.RunPause{Action: protocol.ControlPause, By: "carol"})
	env.ExecuteWorkflow(sleepyFlow.Name(), none{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.ErrorContains(t, mallory.refusal(t), "budget raise by mallory: decision refused (not_allowed): budget decisions are for group:release, creator; mallory is not among them")
	carol.value(t)
	creator.value(t)
	assert.ErrorContains(t, carolPause.refusal(t), "pause decisions are for dave; carol is not among them")
	st := queryState(t, env)
	assert.Equal(t, "3", st.Budget.Cap.Amount.String())
	require.NotNil(t, st.Auth)
	assert.Equal(t, []string{"group:release", "creator"}, st.Auth.Rules[auth.KindBudget])
}
