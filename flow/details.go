package flow

import (
	"fmt"
	"strings"
	"time"
)

// detailsMarkdown renders a run's state as the markdown the Web UI shows under
// "Current details": the status, the money spent, and a table of steps (children's steps
// nested under their step).
func detailsMarkdown(s *RunState, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** — %s", s.Workflow, s.Status)
	if s.MaxAttempts > 1 {
		fmt.Fprintf(&b, " (attempt %d of %d)", s.Attempt, s.MaxAttempts)
	}
	fmt.Fprintf(&b, "\n\nCost **$%s**", s.CostUSD.StringFixed(4))
	if s.Tokens.Total() > 0 {
		fmt.Fprintf(&b, " · %d tokens (%d in, %d out)", s.Tokens.Total(), s.Tokens.Input, s.Tokens.Output)
	}
	b.WriteString("\n\n")
	if s.Error != "" {
		fmt.Fprintf(&b, "Error: `%s`\n\n", mdEscape(Preview(s.Error, 300)))
	}
	if len(s.Steps) == 0 {
		b.WriteString("No steps yet.\n")
		return b.String()
	}
	b.WriteString("| step | kind | status | attempt | duration | cost | detail |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	writeStepRows(&b, s.Steps, "", now)
	return b.String()
}

func writeStepRows(b *strings.Builder, steps []StepRecord, indent string, now time.Time) {
	for _, st := range steps {
		detail := st.Output
		if st.Error != "" {
			detail = st.Error
		}
		status := string(st.Status)
		if st.AllowedFailure {
			status += " (allowed)"
		}
		name := st.Name
		if st.Group != "" {
			name = st.Group + " › " + name
		}
		cost := "-"
		if !st.CostUSD.IsZero() {
			cost = "$" + st.CostUSD.StringFixed(4)
		}
		fmt.Fprintf(b, "| %s%s | %s | %s | %d | %s | %s | %s |\n", indent, mdEscape(name), st.Kind, status,
			st.Attempt, st.Duration(now).Round(time.Millisecond), cost, mdEscape(Preview(oneLine(detail), 80)))
		if st.Child != nil && len(st.Child.Steps) > 0 {
			writeStepRows(b, st.Child.Steps, indent+"↳ ", now)
		}
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s)
}
