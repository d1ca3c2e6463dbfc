package flow

import (
	"fmt"
	"strings"
	"time"
)

// detailsMarkdown renders a run's state as the markdown the Web UI shows under
// "Current details": the status and a table of steps.
func detailsMarkdown(s *RunState, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** — %s\n\n", s.Workflow, s.Status)
	if s.Error != "" {
		fmt.Fprintf(&b, "Error: `%s`\n\n", mdEscape(Preview(s.Error, 300)))
	}
	if len(s.Steps) == 0 {
		b.WriteString("No steps yet.\n")
		return b.String()
	}
	b.WriteString("| step | kind | status | attempt | duration | detail |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, st := range s.Steps {
		detail := st.Output
		if st.Error != "" {
			detail = st.Error
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s |\n", mdEscape(st.Name), st.Kind, st.Status,
			st.Attempt, st.Duration(now).Round(time.Millisecond), mdEscape(Preview(oneLine(detail), 80)))
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'", "\n", " ").Replace(s)
}
