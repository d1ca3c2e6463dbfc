package protocol

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/signals"
)

// CatalogID is the workflow ID of a task queue's catalog.
func CatalogID(queue string) string { return "gateflow-catalog-" + queue }

// ControlID is the workflow ID of a task queue's control entity.
func ControlID(queue string) string { return "gateflow-control@" + queue }

// SemaphoreID is the workflow ID of a concurrency group's semaphore on a task queue.
func SemaphoreID(group, queue string) string { return "gateflow-semaphore/" + group + "@" + queue }

// MailboxID is the workflow ID of the mailbox of (name, key) on a task queue: a queue's
// workers serve its own mailboxes.
func MailboxID(queue, name, key string) string { return signals.MailboxID(name, key) + "@" + queue }

// LedgerID is the workflow ID of the monthly ledger of scope on a task queue: the workers
// of a queue keep their own ledgers, so a ledger is always served by its queue's workers.
func LedgerID(queue string, scope budget.Scope, month string) string {
	return budget.LedgerID(scope, month) + "@" + queue
}

// ScheduleID is the Temporal Schedule ID of a flow's n-th schedule on a task queue.
func ScheduleID(workflow string, n int, queue string) string {
	return fmt.Sprintf("gateflow-schedule/%s/%d@%s", workflow, n, queue)
}

// FlowScheduleID is the Temporal Schedule ID of the flow's n-th schedule on queue: named
// by the schedule's ID (schedule.Info.ID) when it has one, else by n (ScheduleID).
func FlowScheduleID(workflow string, n int, id, queue string) string {
	if id != "" {
		return "gateflow-schedule/" + workflow + "/" + id + "@" + queue
	}
	return ScheduleID(workflow, n, queue)
}

// MaxWorkerTags bounds a worker's tags (it polls one queue per combination of them).
const MaxWorkerTags = 4

// TagPattern is what worker tags, concurrency keys and concurrency groups look like: 1-63
// lower-case letters, digits and _.-, starting with a letter or digit.
var TagPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.\-]{0,62}$`)

// TaggedQueue is the task queue of runs that need tags on base: base itself without tags,
// else base@t1+t2 with the tags sorted.
func TaggedQueue(base string, tags []string) string {
	if len(tags) == 0 {
		return base
	}
	t := append([]string(nil), tags...)
	sort.Strings(t)
	return base + "@" + strings.Join(t, "+")
}

// BaseQueue is the queue a tagged queue (TaggedQueue) was made from: queue without its
// "@t1+t2" suffix of tags; a queue without that suffix is its own base.
func BaseQueue(queue string) string {
	i := strings.LastIndexByte(queue, '@')
	if i <= 0 {
		return queue
	}
	for _, t := range strings.Split(queue[i+1:], "+") {
		if !TagPattern.MatchString(t) {
			return queue
		}
	}
	return queue[:i]
}

// TaggedQueues lists the queues a worker with tags polls: base and one per non-empty
// combination of its tags.
func TaggedQueues(base string, tags []string) ([]string, error) {
	if err := ValidateTags(tags); err != nil {
		return nil, err
	}
	if len(tags) > MaxWorkerTags {
		return nil, fmt.Errorf("%d tags: a worker has at most %d", len(tags), MaxWorkerTags)
	}
	t := append([]string(nil), tags...)
	sort.Strings(t)
	queues := []string{base}
	for mask := 1; mask < 1<<len(t); mask++ {
		var subset []string
		for i := range t {
			if mask&(1<<i) != 0 {
				subset = append(subset, t[i])
			}
		}
		queues = append(queues, TaggedQueue(base, subset))
	}
	return queues, nil
}

// ValidateTags checks tag names: 1-63 lower-case letters, digits and _.-, each once.
func ValidateTags(tags []string) error {
	seen := map[string]bool{}
	for _, t := range tags {
		if !TagPattern.MatchString(t) {
			return fmt.Errorf("tag %q: want 1-63 lower-case letters, digits and _.- starting with a letter or digit", t)
		}
		if seen[t] {
			return fmt.Errorf("tag %s given twice", t)
		}
		seen[t] = true
	}
	return nil
}

// CatalogQueue is the task queue of the catalog with workflow ID id, and false when id is
// not a catalog's.
func CatalogQueue(id string) (string, bool) {
	q, ok := strings.CutPrefix(id, CatalogID(""))
	return q, ok && q != ""
}
