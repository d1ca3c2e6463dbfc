package budget

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// MonthOf is the UTC calendar month of t, "2026-11": quotas are per UTC month whatever the
// time zone of t.
func MonthOf(t time.Time) string {
	return t.UTC().Format("2006-01")
}

// ParseMonth reads a month as MonthOf writes it ("2026-11") and returns its first instant,
// in UTC. Anything else is an error naming the value.
func ParseMonth(s string) (time.Time, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil || t.Format("2006-01") != s {
		return time.Time{}, fmt.Errorf("budget: invalid month %q (want YYYY-MM, e.g. 2026-11)", s)
	}
	return t, nil
}

// Scope is what a monthly quota covers: every workflow (AllScope) or one workflow type
// (WorkflowScope).
type Scope string

// AllScope is the quota over all workflows.
const AllScope Scope = "all"

const workflowPrefix = "workflow:"

// WorkflowScope is the quota of one workflow type, "workflow:NAME".
func WorkflowScope(name string) Scope {
	return Scope(workflowPrefix + name)
}

// ParseScope reads a scope as people type it: "all", "workflow:NAME", or a bare workflow
// name (so a workflow named "all" must be written "workflow:all"). Empty input and an empty
// workflow name are errors.
func ParseScope(s string) (Scope, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == string(AllScope):
		return AllScope, nil
	case strings.HasPrefix(s, workflowPrefix):
		if s == workflowPrefix {
			return "", fmt.Errorf("budget: scope %q has no workflow name", s)
		}
		return Scope(s), nil
	case s == "":
		return "", fmt.Errorf("budget: empty scope (want all or workflow:NAME)")
	default:
		return WorkflowScope(s), nil
	}
}

// Workflow is the workflow type of a WorkflowScope; false for AllScope and anything else.
func (s Scope) Workflow() (string, bool) {
	return strings.CutPrefix(string(s), workflowPrefix)
}

// Describe reads "all workflows" or "workflow release", for messages.
func (s Scope) Describe() string {
	if name, ok := s.Workflow(); ok {
		return "workflow " + name
	}
	if s == AllScope {
		return "all workflows"
	}
	return "scope " + string(s)
}

// LedgerIDPrefix starts the workflow ID of every ledger entity workflow.
const LedgerIDPrefix = "gateflow-ledger/"

// LedgerID is the workflow ID of the ledger entity workflow of a scope and month:
// "gateflow-ledger/all/2026-11", "gateflow-ledger/workflow:release/2026-11". It is
// deterministic, and injective: "%" and "/" inside the scope and month are written "%25"
// and "%2F", so a workflow named "a/b" cannot collide with another ID. ParseLedgerID
// reverses it.
func LedgerID(scope Scope, month string) string {
	return LedgerIDPrefix + escapeID(string(scope)) + "/" + escapeID(month)
}

// ParseLedgerID reads a LedgerID back into its scope and month; an ID that LedgerID cannot
// have made is an error naming it.
func ParseLedgerID(id string) (Scope, string, error) {
	bad := fmt.Errorf("budget: %q is not a ledger workflow ID (want %sSCOPE/YYYY-MM)", id, LedgerIDPrefix)
	rest, ok := strings.CutPrefix(id, LedgerIDPrefix)
	if !ok {
		return "", "", bad
	}
	rawScope, rawMonth, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", bad
	}
	scope, ok1 := unescapeID(rawScope)
	month, ok2 := unescapeID(rawMonth)
	if !ok1 || !ok2 || LedgerID(Scope(scope), month) != id {
		return "", "", bad
	}
	if _, err := ParseMonth(month); err != nil {
		return "", "", bad
	}
	if Scope(scope) != AllScope && !strings.HasPrefix(scope, workflowPrefix) {
		return "", "", bad
	}
	return Scope(scope), month, nil
}

var idEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

func escapeID(s string) string { return idEscaper.Replace(s) }

func unescapeID(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "%25"):
			b.WriteByte('%')
		case strings.HasPrefix(s[i:], "%2F"):
			b.WriteByte('/')
		default:
			return "", false
		}
		i += 2
	}
	return b.String(), true
}

// Quota is the state of one monthly quota's ledger entity workflow: what a scope spent in a
// UTC month, with every charge's key so a retried or replayed charge is counted once.
//
// Charges keeps every key of the month. Each costs about 100 bytes of JSON (a 36-character
// run ID, "/", a step key and an amount), so 10,000 charges make about 1 MB; keep keys short
// (ChargeKey) and, for scopes that see more, charge once per run rather than per step.
type Quota struct {
	// Scope is what the quota covers.
	Scope Scope `json:"scope"`
	// Month is the UTC month, "2026-11".
	Month string `json:"month"`
	// Limit is the quota's limit when Set; Check uses it.
	Limit decimal.Decimal `json:"limit"`
	// Set is false when no limit is configured (nothing is ever refused).
	Set bool `json:"set"`
	// Spent is the sum of Charges.
	Spent decimal.Decimal `json:"spent"`
	// Charges maps each charge's key to its amount.
	Charges map[string]decimal.Decimal `json:"charges"`
	// Reserved is the sum of what Reservations still hold: money set aside for admitted
	// runs that have not ended (see Reserve). Admission counts it as if spent.
	Reserved decimal.Decimal `json:"reserved,omitzero"`
	// Reservations maps each reservation's key (one per admitted run) to what it still
	// holds and when the ledger drops it.
	Reservations map[string]QuotaReservation `json:"reservations,omitempty"`
}

// NewQuota opens an empty quota for a scope and month, with no limit set.
func NewQuota(scope Scope, month string) *Quota {
	return &Quota{Scope: scope, Month: month, Charges: map[string]decimal.Decimal{}}
}

// Charge adds a cost under its key ("run/step", see ChargeKey) and says whether it was
// added. A key already charged (a retry, a replay) and a negative amount are not.
func (q *Quota) Charge(key string, amount decimal.Decimal) (added bool) {
	if amount.IsNegative() || q.Has(key) {
		return false
	}
	if q.Charges == nil {
		q.Charges = map[string]decimal.Decimal{}
	}
	q.Charges[key] = amount
	q.Spent = q.Spent.Add(amount)
	return true
}

// Has says whether a charge with this key was counted.
func (q *Quota) Has(key string) bool {
	_, ok := q.Charges[key]
	return ok
}

// Keys are the charged keys, sorted.
func (q *Quota) Keys() []string {
	keys := make([]string, 0, len(q.Charges))
	for k := range q.Charges {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Exhausted says whether no new run may start under limit: Spent >= limit, so a limit of
// zero refuses every run.
func (q *Quota) Exhausted(limit decimal.Decimal) bool {
	return q.Spent.GreaterThanOrEqual(limit)
}

// Remaining is limit - Spent, never below zero.
func (q *Quota) Remaining(limit decimal.Decimal) decimal.Decimal {
	return nonNegative(limit.Sub(q.Spent))
}

// Check is nil when a new run may start, and a *QuotaError when the quota's own Limit is Set
// and exhausted.
func (q *Quota) Check() error {
	if !q.Set || !q.Exhausted(q.Limit) {
		return nil
	}
	return &QuotaError{Scope: q.Scope, Month: q.Month, Limit: q.Limit, Spent: q.Spent}
}

// Quotas are monthly spending limits (UTC months) a worker enforces on new runs: overall,
// and per workflow. Runs already going are never stopped by a quota.
type Quotas struct {
	MonthlyUSD  *decimal.Decimal
	PerWorkflow map[string]decimal.Decimal
}

// Any reports whether a quota is configured.
func (q Quotas) Any() bool { return q.MonthlyUSD != nil || len(q.PerWorkflow) > 0 }

// LimitFor is the quota of scope, and whether it has one.
func (q Quotas) LimitFor(scope Scope) (decimal.Decimal, bool) {
	if scope == AllScope {
		if q.MonthlyUSD != nil {
			return *q.MonthlyUSD, true
		}
		return decimal.Zero, false
	}
	name, _ := scope.Workflow()
	d, ok := q.PerWorkflow[name]
	return d, ok
}
