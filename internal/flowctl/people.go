package flowctl

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/signals"
)

func (a *app) approvalsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "approvals",
		Short: "List the approval gates waiting for people, across runs",
		Args:  cobra.NoArgs,
		RunE: a.runE(nil, func(x call) (view, error) {
			gates, err := x.c.Approvals(x.ctx)
			if err != nil {
				return view{}, err
			}
			return view{value: gates, text: func(w io.Writer) error { return approvalsTable(w, gates) }}, nil
		}),
	}
}

// approvalsTable writes the waiting gates for people; a gate that could not be read is
// listed, and fails the command (exit 1).
func approvalsTable(w io.Writer, gates []runs.PendingGate) error {
	tools := hasToolGates(gates) // agent tool calls: their arguments get a column
	cols := []string{"RUN", "GATE", "VOTES", "WHO MAY DECIDE", "VOTED", "DEADLINE", "MESSAGE"}
	if tools {
		cols = append(cols[:6], "TOOL", "ARGUMENTS", "MESSAGE")
	}
	t := newTable(w, cols...)
	unknown := 0
	for _, g := range gates {
		if g.Unknown != "" {
			unknown++
			row := []string{g.Run, "?", "?", "?", "?", "?", "unknown: " + display.Preview(display.OneLine(g.Unknown), 80)}
			if tools {
				row = append(row[:6], "?", "?", row[6])
			}
			t.row(row...)
			continue
		}
		deadline := "none"
		if g.Deadline != nil {
			deadline = fmtTime(*g.Deadline) + " (then " + orDash(g.OnTimeout) + ")"
		}
		row := []string{g.Run, g.Gate, fmt.Sprintf("%d/%d", g.Approvals, g.Required), anyoneIfNone(g.Approvers), orDash(strings.Join(g.Voted, ", ")), deadline,
			display.Preview(display.OneLine(g.Message), 60)}
		if tools {
			row = append(row[:6], orDash(g.Tool), orDash(display.Preview(display.OneLine(string(g.Arguments)), 60)), row[6])
		}
		t.row(row...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if unknown > 0 {
		return &exitError{code: ExitError, err: fmt.Errorf("%d run(s) awaiting approval could not be read (is their worker running?)", unknown)}
	}
	return nil
}

// voteCommand builds approve, reject and request-changes.
func (a *app) voteCommand(use string, kind approval.VoteKind, short string) *cobra.Command {
	var as, comment, arguments string
	cmd := &cobra.Command{
		Use:   use + " RUN GATE",
		Short: short,
		Args:  exactArgs(2, "RUN and GATE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kind == approval.RequestChanges && strings.TrimSpace(comment) == "" {
				return usageErr("request-changes needs --comment saying what to change")
			}
			var edits json.RawMessage
			if cmd.Flags().Changed("arguments") {
				var err error
				if edits, err = a.readJSON("--arguments", arguments); err != nil {
					return err
				}
			}
			return a.run(cmd, args, &as, func(x call) (view, error) {
				res, err := x.c.Vote(x.ctx, x.args[0], approval.Vote{Gate: x.args[1], Kind: kind, By: x.by, Comment: comment, Arguments: edits})
				if err != nil {
					return view{}, err
				}
				return view{value: res, text: a.voteText(x, res)}, nil
			})
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "who votes (default: FLOW_USER, else the OS user)")
	cmd.Flags().StringVarP(&comment, "comment", "m", "", "a comment kept with the vote (required for request-changes)")
	if kind == approval.Reject {
		cmd.Flags().StringVar(&comment, "reason", "", "why it is rejected (the same as --comment)")
	}
	if kind == approval.Approve {
		cmd.Flags().StringVar(&arguments, "arguments", "", "at an agent's tool call: run the tool with these arguments instead (a JSON object, or @file; @- for standard input); checked against the tool's schema, and signed with the vote")
	}
	return cmd
}

// hasToolGates reports whether any of the gates is an agent tool call's.
func hasToolGates(gates []runs.PendingGate) bool {
	for _, g := range gates {
		if g.Tool != "" {
			return true
		}
	}
	return false
}

// voteText says what became of a vote.
func (a *app) voteText(x call, res approval.VoteResult) func(io.Writer) error {
	switch res.Status {
	case approval.VoteQueued:
		return say("Vote kept: run %s has not reached a gate %s yet; it counts when a gate of that name opens, if you may decide it (%s). flowctl show lists kept votes.\n", x.args[0], x.args[1], a.asWho(x.by))
	case approval.VoteOpen:
		return say("Counted: gate %s has %d of %d approvals (%s).\n", res.Gate, res.Approvals, res.Required, a.asWho(x.by))
	case approval.VoteDuplicate:
		return say("Already counted: gate %s has %d of %d approvals (%s).\n", res.Gate, res.Approvals, res.Required, a.asWho(x.by))
	}
	return say("Gate %s is now %s (%s).\n", res.Gate, res.Status, a.asWho(x.by))
}

func (a *app) inputCommand() *cobra.Command {
	var as, data string
	cmd := &cobra.Command{
		Use:   "input RUN NAME --data JSON|@file",
		Short: "Answer a run's request for human input",
		Args:  exactArgs(2, "RUN and NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := a.readJSON("--data", data)
			if err != nil {
				return err
			}
			return a.run(cmd, args, &as, func(x call) (view, error) {
				ans, err := x.c.Answer(x.ctx, flowclient.AnswerRequest{Run: x.args[0], Name: x.args[1], Data: raw, By: x.by})
				if err != nil {
					return view{}, err
				}
				return view{value: ans, text: say("Answer to %s accepted by run %s (%s).\n", x.args[1], x.args[0], a.asWho(x.by))}, nil
			})
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "who answers (default: FLOW_USER, else the OS user)")
	cmd.Flags().StringVarP(&data, "data", "d", "", "the answer as JSON, or @file (@- for standard input)")
	return cmd
}

func (a *app) signalCommand() *cobra.Command {
	var as, data, key, run, id string
	cmd := &cobra.Command{
		Use:   "signal NAME [--key K] [--run RUN] --data JSON [--id ID]",
		Short: "Send a signal to a run, or to every run waiting on a key",
		Long: "Send a signal. With --run it goes to that run; without, it needs --key and goes to\n" +
			"every run waiting on (NAME, KEY), and is kept for runs that start waiting later.\n" +
			"A repeated --id is delivered once; sent to a run (--run) that has received it already, it\n" +
			"is not sent again and flowctl says \"Duplicate: ...\" (-o json: \"duplicate\": true).",
		Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := json.RawMessage("null")
			if data != "" {
				var err error
				if raw, err = a.readJSON("--data", data); err != nil {
					return err
				}
			}
			if run == "" && key == "" {
				return usageErr("signal %s needs --run RUN or --key KEY", args[0])
			}
			return a.run(cmd, args, &as, func(x call) (view, error) {
				return a.sendSignal(x, signals.Envelope{Name: x.args[0], Key: key, ID: id, Payload: raw, Sender: x.by}, run)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&as, "as", "", "who sends it (default: FLOW_USER, else the OS user)")
	f.StringVarP(&data, "data", "d", "", "the payload as JSON, or @file (@- for standard input)")
	f.StringVarP(&key, "key", "k", "", "the signal's key")
	f.StringVar(&run, "run", "", "the run to signal (default: every run waiting on --key)")
	f.StringVar(&id, "id", "", "the signal's ID, so a resend is delivered once (default: random)")
	return cmd
}

// sendSignal sends env to run, or to every run waiting on its key when run is "", unless
// it was received or kept already (a signal is delivered once per ID).
func (a *app) sendSignal(x call, env signals.Envelope, run string) (view, error) {
	if run != "" && env.ID != "" {
		if got := receivedSignal(x.ctx, x.c, run, env.Name, env.ID); got != nil {
			return duplicateSignal("run "+run+" has received", *got), nil
		}
	}
	if run == "" && env.ID != "" && env.Key != "" {
		if q := a.keptSignal(x.ctx, env); q != "" {
			return duplicateSignal("the mailbox of key "+env.Key+" on task queue "+q+" keeps", env), nil
		}
	}
	key := env.Key
	var queues []string
	var err error
	if run == "" {
		env, queues, err = x.c.SignalKey(x.ctx, env)
	} else {
		env, err = x.c.Signal(x.ctx, run, env)
	}
	if err != nil {
		return view{}, err
	}
	to := "run " + run
	if run == "" {
		to = "every run waiting on key " + key + " on task queue " + strings.Join(queues, ", ")
		if len(queues) > 1 {
			to = "every run waiting on key " + key + " on task queues " + strings.Join(queues, ", ")
		}
	}
	return view{value: env, text: say("Signal %s (id %s) sent to %s (%s).\n", env.Name, env.ID, to, a.asWho(x.by))}, nil
}
