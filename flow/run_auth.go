package flow

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/searchattr"
	"github.com/gateflow/gateflow/runs"
)

// authPart is the run's decision policy: pinned from the worker's WorkerOptions.Auth when
// the run starts (a SideEffect, so replay and later verdicts use the keys the run started
// with), and the nonces of the proofs it accepted, so no proof counts twice.
type authPart struct {
	policy *auth.Policy
	used   map[string]time.Time // nonce → the proof's expiry
	// bindRun: proofs must bind the run's first run ID, not only its workflow ID, so a
	// proof signed for an earlier run with the same ID is refused. Runs pinned before
	// (no "gateflow.auth.run" marker) accept proofs that bind none, as recorded.
	bindRun bool
}

// pinAuth pins policy for the run, when the worker has one. Runs started before their
// worker had a policy keep verifying nothing (the version marker is absent).
func pinAuth(wctx workflow.Context, policy *auth.Policy, dir approval.Directory, st *runs.State) (*authPart, error) {
	a := &authPart{used: map[string]time.Time{}}
	if policy == nil || workflow.GetVersion(wctx, "gateflow.auth", workflow.DefaultVersion, 1) != 1 {
		return a, nil
	}
	var pinned auth.Policy
	if err := workflow.SideEffect(wctx, func(workflow.Context) any { return withMembers(*policy, dir) }).Get(&pinned); err != nil {
		return nil, fmt.Errorf("pin the decision policy: %w", err)
	}
	a.policy = &pinned
	a.bindRun = workflow.GetVersion(wctx, "gateflow.auth.run", workflow.DefaultVersion, 1) == 1
	info := &runs.Auth{Required: pinned.Required, Rules: pinned.Rules}
	for _, k := range pinned.Directory.Keys() {
		info.KeyIDs = append(info.KeyIDs, k.JWK.KeyID)
	}
	if pinned.Issuer != nil {
		info.Issuer = pinned.Issuer.URL
	}
	st.Auth = info
	return a, nil
}

// withMembers is p with the members of the groups its rules name, as dir has them now (a
// group dir does not know has none).
func withMembers(p auth.Policy, dir approval.Directory) auth.Policy {
	groups := p.Groups()
	if len(groups) == 0 || dir == nil {
		return p
	}
	p.Members = map[string][]string{}
	for _, g := range groups {
		if m, err := dir.Members(g); err == nil {
			p.Members[g] = m
		}
	}
	return p
}

// on reports whether the run verifies decisions.
func (a *authPart) on() bool { return a != nil && a.policy != nil }

// signalsRefused reports whether decisions sent as Signals are refused (proofs are
// required, and a Signal cannot be refused before it enters history).
func (a *authPart) signalsRefused() bool { return a.on() && a.policy.Required }

// verify checks proof for d: nil (unverified) when the run verifies nothing or, outside
// required mode, when there is no proof; a refusal when the proof does not verify or was
// used before.
func (a *authPart) verify(ctx workflow.Context, d auth.Decision, proof string) (*auth.Verified, error) {
	if !a.on() {
		return nil, nil
	}
	if proof == "" {
		if a.policy.Required {
			return nil, fmt.Errorf("no proof: this run accepts signed decisions only (sign with flowctl --signing-key FILE, or flowclient.Options.Key)")
		}
		return nil, nil
	}
	v, err := a.policy.Verify(proof, d, auth.VerifyOptions{Now: runNow(ctx), AllowUnbound: !a.bindRun})
	if err != nil {
		return nil, err
	}
	if _, dup := a.used[v.Nonce]; dup && v.Nonce != "" {
		return nil, &auth.RefusedError{Reason: auth.ReasonMismatch, Detail: "this signed decision was used already"}
	}
	return &v, nil
}

// check verifies the proof of a decision sent to this run, built by decide from the run's
// namespace and workflow ID, and bound to the run's first run ID; what names the decision
// in the refusal ("budget raise by alice").
func (a *authPart) check(ctx workflow.Context, what, proof string, decide func(namespace, run string) (auth.Decision, error)) (*auth.Verified, error) {
	if !a.on() {
		return nil, nil
	}
	info := workflow.GetInfo(ctx)
	d, err := decide(info.Namespace, info.WorkflowExecution.ID)
	if err != nil {
		return nil, err
	}
	d.FirstRunID = info.FirstRunID
	if d.FirstRunID == "" { // a server always names it; the SDK's test environment does not
		d.FirstRunID = info.WorkflowExecution.RunID
	}
	v, err := a.verify(ctx, d, proof)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if d.Kind != auth.KindVote && d.Kind != auth.KindAnswer { // gates and inputs have their own rules
		creator, _ := workflow.GetTypedSearchAttributes(ctx).GetKeyword(searchattr.CreatedByKey)
		if err := a.policy.Allow(d.Kind, d.By, creator); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return v, nil
}

// spend records that the run accepted v's proof, and forgets proofs expired long ago.
func (a *authPart) spend(ctx workflow.Context, v *auth.Verified) {
	if v == nil || v.Nonce == "" {
		return
	}
	now := runNow(ctx)
	for n, exp := range a.used {
		if now.Sub(exp) > time.Hour { // past any leeway: such a proof is refused as expired anyway
			delete(a.used, n)
		}
	}
	a.used[v.Nonce] = v.Expiry
}
