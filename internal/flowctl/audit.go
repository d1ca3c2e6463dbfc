package flowctl

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/decisions"
	"github.com/gateflow/gateflow/internal/protocol"
)

// auditEntry is one decision sent to a run, as flowctl audit reports it.
type auditEntry struct {
	At time.Time `json:"at"`
	// Kind is vote, answer, budget or pause; Target the gate or input ("" for the run);
	// Via is "update" or "signal".
	Kind   auth.Kind `json:"kind"`
	Target string    `json:"target,omitempty"`
	Via    string    `json:"via"`
	// By is the identity the decision claims; ClientIdentity the free string the sending
	// client gave Temporal.
	By             string `json:"by"`
	ClientIdentity string `json:"client_identity,omitempty"`
	// Principal is the caller the server verified, on servers with principal attribution
	// (flow-worker --dev --auth): set for Signals; an Update's accepted event is written by
	// the worker, so it names no voter (the server's Authorizer checked by against the
	// caller when it let the Update through).
	Principal string `json:"principal,omitempty"`
	// Verified says how flowctl verified the proof again, offline, against the keys the run
	// pinned: "signature"/"identity_provider", "unverified" (no proof, or the run pins no
	// policy) or "invalid" with Reason.
	Verified string         `json:"verified"`
	Proof    *auth.Verified `json:"proof,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	// Outcome is what the run did: accepted, failed (the handler refused it), or refused (a
	// Signal the run refused is only in its state; see flowctl show -o json).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`

	// decision, derr and proof are what verifyEntry checks; malformed is why the payload
	// could not be read (one recorded before payloads were decoded strictly).
	decision  auth.Decision
	derr      error
	proof     string
	malformed error
}

// runBinding is what a run's history says about the run its decisions are for.
type runBinding struct {
	// firstRun is the run's first run ID (its chain's first execution).
	firstRun string
	// bound: the run required proofs to bind firstRun (the "gateflow.auth.run" marker);
	// runs pinned before accept proofs that bind only the workflow ID.
	bound bool
}

func (a *app) auditCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "audit RUN",
		Short: "List every decision sent to a run, who claimed it, and verify its proof again from history",
		Long: "audit reads the run's history: every vote, answer, budget raise and pause that entered it\n" +
			"(as an accepted Update, or as a Signal), with the identity it claims and the one the sending\n" +
			"client gave Temporal. Each proof is verified again, offline, against the keys the run pinned\n" +
			"when it started. Decisions the Validators refused never entered history and are not listed.",
		Args: exactArgs(1, "RUN"),
		RunE: a.runE(nil, func(x call) (view, error) {
			entries, err := a.audit(x.ctx, x.c.Temporal(), x.args[0])
			if err != nil {
				return view{}, err
			}
			if len(entries) == 0 {
				return view{value: entries, text: say("No decisions in the history of %s.\n", x.args[0])}, nil
			}
			return view{value: entries, text: func(w io.Writer) error { return auditTable(w, entries) }}, nil
		}),
	}
}

// auditTable writes the decisions for people.
func auditTable(w io.Writer, entries []auditEntry) error {
	t := newTable(w, "AT", "DECISION", "BY", "CLIENT", "VIA", "VERIFIED", "OUTCOME")
	for _, e := range entries {
		v := e.Verified
		switch {
		case e.Proof != nil && e.Proof.Unbound:
			v += " " + e.Proof.KeyID + " (not bound to a run)"
		case e.Proof != nil:
			v += " " + e.Proof.KeyID
		case e.Reason != "":
			v += ": " + e.Reason
		}
		client := e.ClientIdentity
		if e.Principal != "" {
			client += " (principal " + e.Principal + ")"
		}
		t.row(e.At.Local().Format("2006-01-02 15:04:05"), string(e.Kind)+" "+e.Target, e.By, client, e.Via, v, e.Outcome)
	}
	return t.flush()
}

// audit reads the decisions of run id from its history.
func (a *app) audit(ctx context.Context, tc client.Client, id string) ([]auditEntry, error) {
	r := &auditReader{payloads: a.payloads, run: id, ns: a.namespace, byID: map[string]int{},
		dc: converter.GetDefaultDataConverter()}
	it := tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("read the history of %s: %w", id, err)
		}
		if err := r.event(e); err != nil {
			return nil, err
		}
	}
	return r.out, nil
}

// auditReader reads the decisions of a run from its history, event by event.
type auditReader struct {
	payloads payloadReader
	dc       converter.DataConverter
	run, ns  string

	out     []auditEntry
	policy  *auth.Policy   // the decision policy the run pinned
	pinNext bool           // the next SideEffect marker is the pinned policy
	byID    map[string]int // update ID → entry
	bind    runBinding
}

// decode reads the first payload of p (what names it in errors) into v.
func (r *auditReader) decode(p *commonpb.Payloads, what string, v any) error {
	if len(p.GetPayloads()) == 0 {
		return fmt.Errorf("%s has no payload", what)
	}
	pl, err := r.payloads.resolve(p.GetPayloads()[0], what)
	if err != nil {
		return err
	}
	return r.dc.FromPayload(pl, v)
}

// event reads one history event.
func (r *auditReader) event(e *historypb.HistoryEvent) error {
	at := e.GetEventTime().AsTime()
	switch e.GetEventType() {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
		attrs := e.GetWorkflowExecutionStartedEventAttributes()
		r.bind.firstRun = attrs.GetFirstExecutionRunId()
		if r.bind.firstRun == "" {
			r.bind.firstRun = attrs.GetOriginalExecutionRunId()
		}
	case enumspb.EVENT_TYPE_MARKER_RECORDED:
		return r.marker(e.GetMarkerRecordedEventAttributes())
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
		req := e.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest()
		entry, ok := auditDecision(req.GetInput().GetName(), func(v any) error {
			return r.decode(req.GetInput().GetArgs(), "update "+req.GetInput().GetName(), v)
		}, r.ns, r.run)
		if !ok {
			return nil
		}
		entry.At, entry.Via, entry.ClientIdentity, entry.Outcome = at, "update", req.GetMeta().GetIdentity(), "accepted"
		verifyEntry(&entry, r.policy, r.bind, at)
		r.byID[req.GetMeta().GetUpdateId()] = len(r.out)
		r.out = append(r.out, entry)
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
		c := e.GetWorkflowExecutionUpdateCompletedEventAttributes()
		if i, ok := r.byID[c.GetMeta().GetUpdateId()]; ok {
			if f := c.GetOutcome().GetFailure(); f != nil {
				r.out[i].Outcome, r.out[i].Error = "failed", f.GetMessage()
			}
		}
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
		r.signaled(e, at)
	}
	return nil
}

// marker reads the markers that bind decisions to the run and pin its decision policy.
func (r *auditReader) marker(m *historypb.MarkerRecordedEventAttributes) error {
	switch {
	case m.GetMarkerName() == "Version" && markerString(m.GetDetails()["change-id"]) == "gateflow.auth.run":
		r.bind.bound = true
	case m.GetMarkerName() == "Version" && markerString(m.GetDetails()["change-id"]) == "gateflow.auth":
		r.pinNext = true
	case m.GetMarkerName() == "SideEffect" && r.pinNext:
		r.pinNext = false
		var p auth.Policy
		if err := r.decode(m.GetDetails()["data"], "the pinned decision policy", &p); err != nil {
			return err
		}
		r.policy = &p
	}
	return nil
}

// signaled reads a vote sent as a Signal.
func (r *auditReader) signaled(e *historypb.HistoryEvent, at time.Time) {
	s := e.GetWorkflowExecutionSignaledEventAttributes()
	if s.GetSignalName() != protocol.SignalApproval {
		return
	}
	var v approval.Vote
	entry := auditEntry{Kind: auth.KindVote}
	if err := r.decode(s.GetInput(), "signal "+s.GetSignalName(), &v); err != nil {
		entry.malformed = err
	} else {
		entry = voteEntry(v, r.ns, r.run)
	}
	entry.At, entry.Via, entry.ClientIdentity, entry.Outcome = at, "signal", s.GetIdentity(), "sent"
	entry.Principal = e.GetPrincipal().GetName()
	if r.policy != nil && r.policy.Required {
		entry.Outcome = "refused"
	}
	verifyEntry(&entry, r.policy, r.bind, at)
	r.out = append(r.out, entry)
}

// auditDecision decodes a decision Update; ok is false for Updates that are not decisions.
// A payload that does not decode (strictly: one a run accepted before payloads were
// decoded strictly, such as {"by":"mallory","By":"alice"}) is an entry claiming no one,
// invalid with why.
func auditDecision(name string, decode func(any) error, ns, run string) (auditEntry, bool) {
	var (
		e   auditEntry
		err error
	)
	switch name {
	case protocol.UpdateApproval:
		var v approval.Vote
		if err = decode(&v); err == nil {
			e = voteEntry(v, ns, run)
		}
	case protocol.UpdateInput:
		var m protocol.InputAnswer
		if err = decode(&m); err == nil {
			e = auditEntry{Kind: auth.KindAnswer, Target: m.Name, By: m.By}
			e.decision, e.derr = decisions.Answer(ns, run, m)
			e.proof = m.Proof
		}
	case protocol.UpdateBudget:
		var m protocol.BudgetRaise
		if err = decode(&m); err == nil {
			e = auditEntry{Kind: auth.KindBudget, Target: "to " + m.To, By: m.By}
			e.decision, e.derr = decisions.Budget(ns, run, m)
			e.proof = m.Proof
		}
	case protocol.UpdatePause:
		var m protocol.RunPause
		if err = decode(&m); err == nil {
			e = auditEntry{Kind: auth.KindPause, Target: m.Action, By: m.By}
			e.decision, e.derr = decisions.Pause(ns, run, m)
			e.proof = m.Proof
		}
	case protocol.UpdateCancel:
		var m protocol.RunCancel
		if err = decode(&m); err == nil {
			e = auditEntry{Kind: auth.KindCancel, Target: "run", By: m.By}
			e.decision, e.derr = decisions.Cancel(ns, run, m)
			e.proof = m.Proof
		}
	default:
		return e, false
	}
	if err != nil {
		return auditEntry{Kind: updateKinds[name], malformed: fmt.Errorf("decode update %s: %w", name, err)}, true
	}
	return e, true
}

// updateKinds are the decision kinds of the decision Updates.
var updateKinds = map[string]auth.Kind{
	protocol.UpdateApproval: auth.KindVote, protocol.UpdateInput: auth.KindAnswer, protocol.UpdateBudget: auth.KindBudget,
	protocol.UpdatePause: auth.KindPause, protocol.UpdateCancel: auth.KindCancel,
}

func voteEntry(v approval.Vote, ns, run string) auditEntry {
	e := auditEntry{Kind: auth.KindVote, Target: v.Gate, By: v.By}
	e.decision, e.derr = decisions.Vote(ns, run, v)
	e.proof = v.Proof
	return e
}

// verifyEntry verifies e's proof again against the run's pinned policy at the time the
// decision entered history, for the run bind names (a proof that binds only the workflow
// ID is accepted on runs that did not require more, and reported as not bound to a run).
func verifyEntry(e *auditEntry, policy *auth.Policy, bind runBinding, at time.Time) {
	switch {
	case e.malformed != nil:
		e.Verified, e.Reason = "invalid", "malformed payload: "+e.malformed.Error()
		return
	case e.proof == "":
		e.Verified = "unverified"
		return
	case policy == nil:
		e.Verified, e.Reason = "unverified", "the run pins no decision policy"
		return
	case e.derr != nil:
		e.Verified, e.Reason = "invalid", e.derr.Error()
		return
	}
	d := e.decision
	d.FirstRunID = bind.firstRun
	v, err := policy.Verify(e.proof, d, auth.VerifyOptions{Now: at, AllowUnbound: !bind.bound})
	if err != nil {
		e.Verified, e.Reason = "invalid", err.Error()
		return
	}
	e.Verified, e.Proof = string(v.Method), &v
	if v.Unbound {
		e.Reason = "not bound to a run: signed for the workflow ID only, before decisions bound the run"
	}
}

// markerString decodes a marker detail holding a string ("" when it does not).
func markerString(p *commonpb.Payloads) string {
	var s string
	if len(p.GetPayloads()) == 0 || converter.GetDefaultDataConverter().FromPayload(p.GetPayloads()[0], &s) != nil {
		return ""
	}
	return s
}
