/*
Package runs holds what a gateflow run records about itself and what clients read back:
the run's State (status, attempt, cost, tokens, guards, waits, gates, inputs, labels) with a
Step record for every step, and the Description and Summary that flowclient.Client's Describe
and List return.

A run keeps its State in workflow memory while it runs and answers the gateflow.state
Query with it; when it ends the final State goes into the run's Memo, so flowctl show, the
Web UI details and testsuite read the same record whether the worker is up or not:

	d, err := client.Describe(ctx, "release-42")
	if err != nil {
		return err
	}
	for _, s := range d.State.Nested() { // branches followed by their steps
		fmt.Println(s.Label(), s.StatusText(), s.CostText(), s.Detail(80))
	}
	if d.Status == runs.StatusAwaitingApproval {
		for _, w := range d.State.Waiting {
			fmt.Println("waiting for", w)
		}
	}

# Statuses

A run's Status is one of the live statuses (StatusPending, StatusRunning, the waiting ones
such as StatusAwaitingApproval, StatusSleeping, StatusBudgetPaused, StatusPaused) or a
terminal one (Status.Terminal: completed, warning, failed, rejected, cancelled,
budget_exceeded). It is also the FlowStatus search attribute, so `flowctl list --status`
and the Web UI's list filter on it; ParseStatus reads the names people type.

A step's StepStatus is how it stands (StepRunning, StepWaitingCapacity,
StepWaitingService) or ended (StepCompleted, StepFailed, StepTimedOut, StepSkipped,
StepCancelled, StepRefused, StepPlanned for a plan's stubbed steps); its StepKind says what
it does (KindShell, KindHTTP, KindAgent, KindChild, KindApproval, ...).

# Waits

While a run waits for something outside it, State.Waiting lists each Wait as text
("approval:ship", "input:notes", "signal:deploy/eu", "budget", "gate:checks/http"), the
same text the FlowWaiting search attribute holds; ParseWait reads it back and Wait.Command
is the flowctl command that answers it.

Records are plain data: they marshal to the JSON flowctl prints with -o json, and every
field that money touches is an exact decimal.

The JSON is kept small, since the State grows with every step and goes into the Memo:
fields at their zero value are left out, and a Step leaves out activity_id when it is the
step's default ID (its branch and name) and attempt and run_attempt when they are 1;
Step's UnmarshalJSON puts them back, and decodes what older versions wrote (encoding.go).
A reader that decodes this JSON with other types must apply the same defaults.
*/
package runs
