package flowctl

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/runs"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
)

func (a *app) listCommand() *cobra.Command {
	var opts flowclient.ListOptions
	var status, page string
	var mine bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List recent runs, newest first",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := listOptions(&opts, status, page); err != nil {
				return err
			}
			// The next page's token goes to stderr, so stdout stays a table or a JSON array.
			var nextPage string
			defer func() {
				if nextPage != "" {
					fmt.Fprintf(a.stderr, "more: flowctl list --page %s\n", nextPage)
				}
			}()
			return a.run(cmd, nil, nil, func(x call) (view, error) {
				if mine {
					opts.WaitingFor = string(runs.ForApproval) + ":" // any approval (a prefix, see ListOptions)
				}
				found, next, err := x.c.ListPage(x.ctx, opts)
				if err != nil {
					return view{}, err
				}
				if mine {
					if found, err = a.mine(cmd, x.c, found); err != nil {
						return view{}, err
					}
				}
				if len(next) > 0 {
					nextPage = base64.RawURLEncoding.EncodeToString(next)
				}
				return view{value: found, text: func(w io.Writer) error { return runsTable(w, found) }}, nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Workflow, "workflow", "", "only runs of this workflow")
	f.StringVar(&status, "status", "", "only runs with this status (running, completed, failed, ...)")
	f.IntVar(&opts.Limit, "limit", 20, "at most this many runs (a page)")
	f.StringVar(&page, "page", "", "the next page, as a previous list printed it")
	f.StringVar(&opts.Label, "label", "", "only runs with this label k=v")
	f.StringVar(&opts.CreatedBy, "created-by", "", "only runs started by this person")
	f.StringVar(&opts.WaitingFor, "waiting-for", "", "only runs waiting for this (approval:GATE, input:NAME, signal:NAME, or approval: for any)")
	f.BoolVar(&mine, "waiting-on-me", false, "only runs waiting for an approval I may give (I: the authenticated caller, else FLOW_USER, else the OS user)")
	return cmd
}

// listOptions checks list's --status, --waiting-for and --page into opts.
func listOptions(opts *flowclient.ListOptions, status, page string) error {
	if status != "" {
		st, err := runs.ParseStatus(status)
		if err != nil {
			return usageErr("--status %q: %v", status, err)
		}
		opts.Status = st
	}
	if w := opts.WaitingFor; w != "" {
		probe := w // "KIND:" is a prefix: any wait of that kind
		if strings.HasSuffix(w, ":") {
			probe += "x"
		}
		if _, err := runs.ParseWait(probe); err != nil {
			return usageErr("--waiting-for: %v", err)
		}
	}
	if page != "" {
		tok, err := base64.RawURLEncoding.DecodeString(page)
		if err != nil {
			return usageErr("--page %q is not a page token from a previous list", page)
		}
		opts.PageToken = tok
	}
	return nil
}

// runsTable writes runs for people.
func runsTable(w io.Writer, found []runs.Summary) error {
	t := newTable(w, "RUN", "WORKFLOW", "STATUS", "STARTED", "DURATION", "BY")
	now := time.Now()
	for _, r := range found {
		end := now
		if r.CloseTime != nil {
			end = *r.CloseTime
		}
		t.row(r.ID, r.Workflow, string(r.Status), fmtTime(r.StartTime), fmtDuration(end.Sub(r.StartTime)), orDash(r.CreatedBy))
	}
	return t.flush()
}

// mine keeps the runs with an open gate the current user may decide and has not voted on
// yet. The run's worker answers that (protocol.QueryMayDecide: group membership resolved
// as votes are checked); a run whose worker cannot (older, or down) is judged by name, and
// kept when a gate is open to a group.
func (a *app) mine(cmd *cobra.Command, c *flowclient.Client, found []runs.Summary) ([]runs.Summary, error) {
	me, err := a.who("")
	if err != nil {
		return nil, err
	}
	var out []runs.Summary
	for _, r := range found {
		d, err := c.Describe(cmd.Context(), r.ID)
		if err != nil || d.State == nil {
			continue
		}
		if gates, ok := a.mayDecide(cmd.Context(), r.ID, me); ok {
			if len(gates) > 0 {
				out = append(out, r)
			}
			continue
		}
		for _, g := range d.State.Gates {
			if g.Closed() || votedOn(g, me) {
				continue // nothing left for me to give
			}
			if ok, _ := g.Request.Allowed(me, nil); ok || len(g.Request.Groups()) > 0 {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

// mayDecide asks the run's worker which open gates of run who may decide; ok is false when
// it cannot answer.
func (a *app) mayDecide(ctx context.Context, run, who string) (gates []string, ok bool) {
	if a.tc == nil {
		return nil, false
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := a.tc.QueryWorkflow(qctx, run, "", protocol.QueryMayDecide, who)
	if err != nil || v.Get(&gates) != nil {
		return nil, false
	}
	return gates, true
}

// votedOn reports whether who has voted on gate g already.
func votedOn(g *approval.Gate, who string) bool {
	for _, v := range g.Votes {
		if v.By == who {
			return true
		}
	}
	return false
}
