package flowctl

import (
	"encoding/json"
	"fmt"
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			gates, err := c.Approvals(cmd.Context())
			if err != nil {
				return err
			}
			if a.output == "json" {
				if gates == nil {
					gates = []runs.PendingGate{}
				}
				return printJSON(a.stdout, gates)
			}
			t := newTable(a.stdout, "RUN", "GATE", "VOTES", "WHO MAY DECIDE", "VOTED", "DEADLINE", "MESSAGE")
			unknown := 0
			for _, g := range gates {
				if g.Unknown != "" {
					unknown++
					t.row(g.Run, "?", "?", "?", "?", "?", "unknown: "+display.Preview(display.OneLine(g.Unknown), 80))
					continue
				}
				deadline := "none"
				if g.Deadline != nil {
					deadline = fmtTime(*g.Deadline) + " (then " + orDash(g.OnTimeout) + ")"
				}
				t.row(g.Run, g.Gate, fmt.Sprintf("%d/%d", g.Approvals, g.Required), anyoneIfNone(g.Approvers), orDash(strings.Join(g.Voted, ", ")), deadline,
					display.Preview(display.OneLine(g.Message), 60))
			}
			if err := t.flush(); err != nil {
				return err
			}
			if unknown > 0 {
				return &exitError{code: ExitError, err: fmt.Errorf("%d run(s) awaiting approval could not be read (is their worker running?)", unknown)}
			}
			return nil
		},
	}
}

// voteCommand builds approve, reject and request-changes.
func (a *app) voteCommand(use string, kind approval.VoteKind, short string) *cobra.Command {
	var as, comment string
	cmd := &cobra.Command{
		Use:   use + " RUN GATE",
		Short: short,
		Args:  exactArgs(2, "RUN and GATE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kind == approval.RequestChanges && strings.TrimSpace(comment) == "" {
				return usageErr("request-changes needs --comment saying what to change")
			}
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			by, err := a.who(as)
			if err != nil {
				return err
			}
			res, err := c.Vote(cmd.Context(), args[0], approval.Vote{Gate: args[1], Kind: kind, By: by, Comment: comment})
			if err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, res)
			}
			switch res.Status {
			case approval.VoteQueued:
				fmt.Fprintf(a.stdout, "Vote kept: run %s has not reached a gate %s yet; it counts when a gate of that name opens, if you may decide it (%s). flowctl show lists kept votes.\n", args[0], args[1], a.asWho(by))
			case approval.VoteOpen:
				fmt.Fprintf(a.stdout, "Counted: gate %s has %d of %d approvals (%s).\n", res.Gate, res.Approvals, res.Required, a.asWho(by))
			case approval.VoteDuplicate:
				fmt.Fprintf(a.stdout, "Already counted: gate %s has %d of %d approvals (%s).\n", res.Gate, res.Approvals, res.Required, a.asWho(by))
			default:
				fmt.Fprintf(a.stdout, "Gate %s is now %s (%s).\n", res.Gate, res.Status, a.asWho(by))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&as, "as", "", "who votes (default: FLOW_USER, else the OS user)")
	cmd.Flags().StringVarP(&comment, "comment", "m", "", "a comment kept with the vote (required for request-changes)")
	if kind == approval.Reject {
		cmd.Flags().StringVar(&comment, "reason", "", "why it is rejected (the same as --comment)")
	}
	return cmd
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
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			by, err := a.who(as)
			if err != nil {
				return err
			}
			ans, err := c.Answer(cmd.Context(), flowclient.AnswerRequest{Run: args[0], Name: args[1], Data: raw, By: by})
			if err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, ans)
			}
			fmt.Fprintf(a.stdout, "Answer to %s accepted by run %s (%s).\n", args[1], args[0], a.asWho(by))
			return nil
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
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			by, err := a.who(as)
			if err != nil {
				return err
			}
			env := signals.Envelope{Name: args[0], Key: key, ID: id, Payload: raw, Sender: by}
			if run != "" && id != "" {
				if got := receivedSignal(cmd.Context(), c, run, args[0], id); got != nil {
					return a.duplicateSignal("run "+run+" has received", *got)
				}
			}
			if run == "" && id != "" && key != "" {
				if q := a.keptSignal(cmd.Context(), env); q != "" {
					return a.duplicateSignal("the mailbox of key "+key+" on task queue "+q+" keeps", env)
				}
			}
			var queues []string
			if run == "" {
				env, queues, err = c.SignalKey(cmd.Context(), env)
			} else {
				env, err = c.Signal(cmd.Context(), run, env)
			}
			if err != nil {
				return err
			}
			e := env
			if a.output == "json" {
				return printJSON(a.stdout, e)
			}
			to := "run " + run
			if run == "" {
				to = "every run waiting on key " + key + " on task queue " + strings.Join(queues, ", ")
				if len(queues) > 1 {
					to = "every run waiting on key " + key + " on task queues " + strings.Join(queues, ", ")
				}
			}
			fmt.Fprintf(a.stdout, "Signal %s (id %s) sent to %s (%s).\n", e.Name, e.ID, to, a.asWho(by))
			return nil
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
