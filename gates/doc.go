/*
Package gates holds gateflow's polled gates: a gate that decides by asking something
outside the run, again and again, until the answer is yes or no. A CI pipeline turning
green, a change ticket being approved, a health endpoint reporting ready, a script that
exits 0: each is a Resolver, registered on the worker by its type, and a handler waits on
one with ctx.Gate (package flow).

	res, err := ctx.Gate("ci-green", gates.Request{
		Type:         "http",
		Params:       gates.HTTPParams{URL: ciURL, Field: "status", Equals: "success", RejectValues: []any{"failure"}},
		PollInterval: 30 * time.Second,
		Timeout:      2 * time.Hour,
		OnTimeout:    gates.RejectOnTimeout,
		AllowManual:  true,
	})

# Resolvers

A Resolver answers one poll: Poll gets the gate's name, the run, the poll's number and the
handler's params (JSON; Params.Decode reads them into the resolver's own type) and returns
a Poll that is approved (with a comment), rejected (with a reason) or pending (with an
optional message). A Resolver runs on the worker inside one activity, gateflow.gate.poll,
so it may do I/O; between polls the run sleeps on a durable timer, so a gate that waits
for hours holds no worker slot and survives restarts.

What a resolver's error means: an error wrapping a *ParamsError (bad params: a missing URL,
an unknown field) fails the gate at once, since asking again cannot help; any other error
is a failed poll, retried by the activity (3 attempts) and then counted as pending with the
error as its message. MaxFailedPolls failed polls in a row fail the gate with the last error.

Two resolvers are built in and always registered:

  - HTTP ("http"): requests a URL and reads one field of its JSON answer (HTTPParams).
  - Command ("command"): runs a shell command; exit 0 approves, exit 3 (PendingExit) keeps
    waiting, any other exit rejects with the tail of stderr (CommandParams).

# Requests and results

A Request names the resolver type and its params, how often to poll (PollInterval, at
least MinPollInterval, default DefaultPollInterval), how long to wait (Timeout, 0 for no
limit) and what the deadline does (OnTimeout: fail, approve, reject or continue). With
AllowManual, people may decide the gate early with the approval Update (flowctl approve /
reject), and the Result says who did. Result is what the handler gets; a rejection is a
*RejectedError (errors.Is ErrRejected), a deadline with FailOnTimeout a *TimedOutError
(errors.Is ErrTimedOut).

This package is pure Go with no Temporal dependency: package flow runs the poll loop.
*/
package gates
