package flow

// What the Temporal Web UI lists next to a run's Updates and Signals ("Send an Update",
// "Send a Signal"): what each does and the JSON it takes. The current details
// (run_details.go) show the exact payload for each open gate and input.
const (
	descApproval = `Vote on an approval gate, or decide a polled gate early. Payload: {"gate": "ship", "vote": "approve", "by": "alice", "comment": "..."}; ` +
		`vote is approve, reject or request_changes (which needs a comment). The current details show the JSON for each open gate. ` +
		`Sent from the Web UI the vote has no signature: it counts as unverified, by the name in "by", and is refused where signed decisions are required.`
	descInput = `Answer a human input request. Payload: {"name": "release-notes", "data": {...}, "by": "alice"}; data must match the input's schema. ` +
		`The current details show the JSON for each open input. Sent from the Web UI the answer has no signature: it counts as unverified.`
	descApprovalSignal = `The vote of the Update gateflow.approval, for tools that can only signal: {"gate": "ship", "vote": "approve", "by": "alice"}. ` +
		`It cannot be refused before it is recorded (a refusal shows in flowctl show), and is refused where signed decisions are required; prefer the Update.`
	descSignal = `A signal a step waits for (ctx.WaitSignal): {"name": "deploy-done", "key": "2.0.0", "id": "unique-id", "payload": {...}, "sender": "alice"}; ` +
		`a repeated id is delivered once. Keyed signals usually go through their mailbox: flowctl signal NAME --key KEY.`
	descCancelSignal = `Sent by older clients just before Temporal's cancellation, to say who cancels and why: {"by": "alice", "reason": "..."}. Use the Update gateflow.cancel instead.`
	descResume       = `Internal: the control entity resumes a run held because its workflow type was paused (flowctl resume TYPE).`
	descPermit       = `Internal: a concurrency group's semaphore grants the run its permit (the group's name).`
	descChildReport  = `Internal: a child run reports its end to its parent.`
)
