package flow

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/internal/display"
)

// detailsMarkdown renders a run's state as the markdown the Web UI shows under
// "Current details": the status, the money spent, and a table of steps (children's steps
// nested under their step). Its flowctl commands have no connection flags (renderDetails).
func detailsMarkdown(s *runs.State, now time.Time) string { return renderDetails(s, now, "", nil) }

// renderDetails is detailsMarkdown whose flowctl commands carry conn, the connection flags
// that differ from flowctl's defaults (connFlags). With a cache (the run's own), the rows
// of finished steps rendered before are reused (run_details_rows.go).
func renderDetails(s *runs.State, now time.Time, conn string, cache *detailsCache) string {
	var b strings.Builder
	if cache != nil {
		b.Grow(cache.size + 256)
		defer func() { cache.size = b.Len() }()
	}
	b.WriteString("**")
	b.WriteString(s.Workflow)
	b.WriteString("** — ")
	b.WriteString(string(s.Status))
	if s.MaxAttempts > 1 {
		fmt.Fprintf(&b, " (attempt %d of %d)", s.Attempt, s.MaxAttempts)
	}
	b.WriteString("\n\nCost **$")
	b.WriteString(cache.costFixed(s.CostUSD))
	b.WriteString("**")
	if s.Tokens.Total() > 0 {
		fmt.Fprintf(&b, " · %d tokens (%d in, %d out)", s.Tokens.Total(), s.Tokens.Input, s.Tokens.Output)
	}
	b.WriteString("\n\n")
	if s.Error != "" {
		fmt.Fprintf(&b, "Error: `%s`\n\n", mdEscape(display.Preview(s.Error, 300)))
	}
	writeWaiting(&b, s, conn)
	if len(s.Steps) == 0 {
		b.WriteString("No steps yet.\n")
		return b.String()
	}
	b.WriteString("| step | kind | status | attempt | duration | cost | detail |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	steps, nested := s.Steps, hasBranchSteps(s.Steps)
	if nested {
		steps = s.Nested()
	}
	first := 0
	if over := len(steps) - maxDetailRows; over > 0 {
		// The newest rows only, so rendering them (on every change of the run) costs the
		// same at step 10 and at step 1,000.
		b.WriteString(cache.earlierRow(over, s.ID))
		first = over
	}
	if cache == nil || nested {
		writeStepRows(&b, steps[first:], "", now)
		return b.String()
	}
	for i := first; i < len(steps); i++ {
		cache.row(&b, &steps[i], i, now)
	}
	return b.String()
}

// maxDetailRows bounds the step rows of the Web UI details.
const maxDetailRows = 20

// hasBranchSteps reports whether some step ran inside a branch, so the rows must be
// nested (runs.State.Nested) rather than listed in order.
func hasBranchSteps(steps []runs.Step) bool {
	for i := range steps {
		if steps[i].Branch != "" {
			return true
		}
	}
	return false
}

func writeStepRows(b *strings.Builder, steps []runs.Step, indent string, now time.Time) {
	for i := range steps {
		writeStepRow(b, &steps[i], indent, now)
	}
}

// writeWaiting tells people what the run waits for, from whom, until when, the flowctl
// command that answers, and the Update to send from the Web UI instead (webui.go).
func writeWaiting(b *strings.Builder, s *runs.State, conn string) {
	id := "RUN"
	if s.ID != "" {
		id = s.ID
	}
	command := func(w runs.Wait) string { return withConn(w.Command(id), conn) }
	ui := s.Auth == nil || !s.Auth.Required // signed decisions only: the UI cannot sign
	waiting := map[string]bool{}
	for _, w := range s.Waiting {
		waiting[w] = true
	}
	var lines []string
	lines = append(lines, approvalWaitLines(s, waiting, command, ui)...)
	lines = append(lines, inputWaitLines(s, waiting, command, ui)...)
	for _, w := range s.SignalWaits {
		wait := runs.Wait{Kind: runs.ForSignal, Name: w.Name, Key: w.Key}
		if w.Received != nil || !waiting[wait.String()] {
			continue
		}
		keyDesc := ""
		if w.Key != "" {
			keyDesc = fmt.Sprintf(" key `%s`", w.Key)
		}
		lines = append(lines, fmt.Sprintf("- **Signal `%s`**%s, %s. Send: `%s`",
			w.Name, keyDesc, untilDeadline(w.Deadline), command(wait)))
	}
	lines = append(lines, gateWaitLines(s, waiting, command, ui)...)
	if len(lines) == 0 {
		return
	}
	b.WriteString("**Waiting for people**\n\n" + strings.Join(lines, "\n") + "\n\n")
	switch {
	case slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, uiLinePrefix) }):
		b.WriteString(uiIdentityNote + "\n\n")
	case !ui:
		b.WriteString(uiSignedOnlyNote + "\n\n")
	}
}

// untilDeadline is "until <time>", or "no deadline".
func untilDeadline(t *time.Time) string {
	if t == nil {
		return "no deadline"
	}
	return "until " + t.UTC().Format(time.RFC3339)
}

// approvalWaitLines are writeWaiting's lines for the open approval gates the run waits for.
func approvalWaitLines(s *runs.State, waiting map[string]bool, command func(runs.Wait) string, ui bool) []string {
	var lines []string
	for _, g := range s.Gates {
		wait := runs.Wait{Kind: runs.ForApproval, Name: g.Name}
		if g.Closed() || !waiting[wait.String()] {
			continue
		}
		who := strings.Join(g.Request.Approvers, ", ")
		if who == "" {
			who = "anyone"
		}
		var votes []string
		for _, v := range g.Votes {
			votes = append(votes, mdEscape(v.By)+" "+string(v.Kind))
		}
		voted := ""
		if len(votes) > 0 {
			voted = " Voted: " + strings.Join(votes, ", ") + "."
		}
		lines = append(lines, fmt.Sprintf("- **Approval `%s`**: %s — %d of %d approvals from %s, %s (then %s).%s "+
			"Answer: `%s` (or `reject`, `request-changes --comment ...`)",
			g.Name, mdEscape(display.Preview(oneLine(g.Request.Message), 200)), len(g.Approvals()), g.Request.Required, who,
			untilDeadline(g.Deadline), g.Request.OnTimeout, voted, command(wait)))
		if tc := g.Request.Tool; tc != nil { // an agent's tool call (agent_approve.go)
			lines = append(lines, fmt.Sprintf("  - Tool `%s`, arguments `%s`; an approval may edit them (`--arguments JSON`)",
				mdEscape(tc.Name), mdEscape(display.Preview(oneLine(string(tc.Arguments)), 300))))
		}
		if ui {
			lines = append(lines, uiVoteLine(g.Name, false))
		}
	}
	return lines
}

// inputWaitLines are writeWaiting's lines for the open inputs the run waits for.
func inputWaitLines(s *runs.State, waiting map[string]bool, command func(runs.Wait) string, ui bool) []string {
	var lines []string
	for _, in := range s.Inputs {
		wait := runs.Wait{Kind: runs.ForInput, Name: in.Name}
		if in.Answer != nil || !waiting[wait.String()] {
			continue
		}
		who := strings.Join(in.Request.Assignees, ", ")
		if who == "" {
			who = "anyone"
		}
		var deadline *time.Time
		if d, ok := in.Deadline(); ok {
			deadline = &d
		}
		lines = append(lines, fmt.Sprintf("- **Input `%s`**: %s — from %s, %s. Answer: `%s`",
			in.Name, mdEscape(display.Preview(oneLine(in.Request.Prompt), 200)), who, untilDeadline(deadline), command(wait)))
		if ui {
			lines = append(lines, uiAnswerLine(in.Name))
		}
	}
	return lines
}

func oneLine(s string) string { return display.OneLine(s) }

func mdEscape(s string) string { return display.MarkdownCell(s) }

// gateWaitLines are the lines of writeWaiting for the polled gates the run waits for.
func gateWaitLines(s *runs.State, waiting map[string]bool, command func(runs.Wait) string, ui bool) []string {
	var lines []string
	for _, st := range s.Steps {
		if st.Gate == nil || st.Status != runs.StepRunning {
			continue
		}
		wait := runs.Wait{Kind: runs.ForGate, Name: st.Name, Key: st.Gate.Type}
		if !waiting[wait.String()] {
			continue
		}
		line := fmt.Sprintf("- **Polled gate `%s`**: %s.", st.Name, mdEscape(st.Gate.Text()))
		if st.Gate.AllowManual {
			line += fmt.Sprintf(" Decide early: `%s` (or `reject ... --reason ...`)", command(wait))
		}
		lines = append(lines, line)
		if st.Gate.AllowManual && ui {
			lines = append(lines, uiVoteLine(st.Name, true))
		}
	}
	return lines
}
