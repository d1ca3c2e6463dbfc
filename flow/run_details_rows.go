package flow

import (
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/runs"
)

// The Web UI details are rendered again on every change of the run (publish), so their
// cost is paid twice per step, and again for every step on each replay. A run keeps the
// rows of its finished steps rendered (detailsCache): a publish renders only the rows
// that changed, so a step costs the same to publish at step 5 and at step 100.

// detailsCache keeps what the previous renderings of one run's details can lend the next:
// the table rows of finished steps, the cost text and the buffer size.
type detailsCache struct {
	keys []rowKey // by index in runs.State.Steps
	rows []string
	// cost and costText: the last run cost rendered.
	cost     decimal.Decimal
	costText string
	costSet  bool
	// earlier is the "… N earlier steps" row for earlierN.
	earlier  string
	earlierN int
	// size is the last rendering's length, to size the next one's buffer in one go.
	size int
}

// rowKey is everything a step's table row is rendered from (writeStepRow): two steps with
// equal keys have equal rows. Comparing keys costs no allocation; a key that differs
// where the row would not (a new pointer to an equal value) only renders the row again.
type rowKey struct {
	name, group, branch, route, output, errMsg  string
	kind                                        runs.StepKind
	status                                      runs.StepStatus
	attempt                                     int
	started, ended                              time.Time
	cost                                        decimal.Decimal
	limit                                       *decimal.Decimal
	allowed, onError, always, overshoot, cached bool
	cachedAgeMS                                 int64
}

// rowKeyOf is st's row key, and false when its row cannot be kept: a running step's
// duration grows with the clock, and a child step's nested rows change as the child runs.
func rowKeyOf(st *runs.Step) (rowKey, bool) {
	if st.EndedAt == nil || st.Child != nil {
		return rowKey{}, false
	}
	return rowKey{
		name: st.Name, group: st.Group, branch: st.Branch, route: st.Route, output: st.Output, errMsg: st.Error,
		kind: st.Kind, status: st.Status, attempt: st.Attempt, started: st.StartedAt, ended: *st.EndedAt,
		cost: st.CostUSD, limit: st.CostLimitUSD, allowed: st.AllowedFailure, onError: st.OnError, always: st.Always,
		overshoot: st.Overshoot, cached: st.Cached, cachedAgeMS: st.CachedAgeMS,
	}, true
}

// row is the table row of s.Steps[i], kept when the step is finished.
func (c *detailsCache) row(b *strings.Builder, st *runs.Step, i int, now time.Time) {
	key, ok := rowKeyOf(st)
	if !ok {
		writeStepRow(b, st, "", now)
		return
	}
	if i < len(c.keys) && c.keys[i] == key {
		b.WriteString(c.rows[i])
		return
	}
	var one strings.Builder
	writeStepRow(&one, st, "", now)
	for len(c.keys) <= i {
		c.keys, c.rows = append(c.keys, rowKey{}), append(c.rows, "")
	}
	c.keys[i], c.rows[i] = key, one.String()
	b.WriteString(c.rows[i])
}

// costFixed is the run cost to four decimals, rendered again only when it changed.
func (c *detailsCache) costFixed(d decimal.Decimal) string {
	if c == nil {
		return d.StringFixed(4)
	}
	if !c.costSet || c.cost != d {
		c.cost, c.costText, c.costSet = d, d.StringFixed(4), true
	}
	return c.costText
}

// earlierRow is the row that stands for the over oldest steps left out of the table.
func (c *detailsCache) earlierRow(over int, id string) string {
	if c != nil && c.earlierN == over && c.earlier != "" {
		return c.earlier
	}
	row := "| … " + strconv.Itoa(over) + " earlier steps (`flowctl show " + id + "` lists them all) | | | | | | |\n"
	if c != nil {
		c.earlier, c.earlierN = row, over
	}
	return row
}

// writeStepRow writes one step's table row (and its child's steps, nested): name, kind,
// status, attempt, duration, cost, detail. rowKey lists what it reads.
func writeStepRow(b *strings.Builder, st *runs.Step, indent string, now time.Time) {
	var num [20]byte
	b.WriteString("| ")
	b.WriteString(indent)
	b.WriteString(mdEscape(st.Label()))
	b.WriteString(" | ")
	b.WriteString(string(st.Kind))
	b.WriteString(" | ")
	b.WriteString(st.StatusText())
	b.WriteString(" | ")
	b.Write(strconv.AppendInt(num[:0], int64(st.Attempt), 10))
	b.WriteString(" | ")
	b.WriteString(st.Duration(now).Round(time.Millisecond).String())
	b.WriteString(" | ")
	b.WriteString(st.CostText())
	b.WriteString(" | ")
	b.WriteString(mdEscape(st.Detail(80)))
	b.WriteString(" |\n")
	if st.Child != nil && len(st.Child.Steps) > 0 {
		writeStepRows(b, st.Child.Steps, indent+"↳ ", now)
	}
}
