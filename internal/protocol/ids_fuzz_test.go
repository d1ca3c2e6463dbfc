package protocol

import (
	"slices"
	"strings"
	"testing"
)

// FuzzTags: worker tags come from flow-worker --tag and flowctl start --tag. Accepted tags
// match TagPattern; the tagged queue of accepted tags reads back to its base (BaseQueue),
// and a worker's queues include the run's queue for every subset of its tags.
func FuzzTags(f *testing.F) {
	for _, s := range []string{"gpu", "gpu,eu", "gpu,gpu", "GPU", "", "a+b", "a@b", "-x", "x.y_z-1", "a,b,c,d,e"} {
		f.Add("gateflow", s)
	}
	f.Add("queue@gpu", "eu")
	f.Fuzz(func(t *testing.T, base, list string) {
		if base == "" {
			return // a task queue is never empty
		}
		tags := strings.Split(list, ",")
		if err := ValidateTags(tags); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			if _, err := TaggedQueues(base, tags); err == nil {
				t.Fatalf("tags %q refused by ValidateTags, accepted by TaggedQueues", tags)
			}
			return
		}
		for _, tag := range tags {
			if !TagPattern.MatchString(tag) {
				t.Fatalf("tag %q accepted", tag)
			}
		}
		q := TaggedQueue(base, tags)
		if BaseQueue(base) == base && BaseQueue(q) != base {
			t.Fatalf("TaggedQueue(%q, %q) = %q, whose base is %q", base, tags, q, BaseQueue(q))
		}
		queues, err := TaggedQueues(base, tags)
		if len(tags) > MaxWorkerTags {
			if err == nil {
				t.Fatalf("%d tags accepted", len(tags))
			}
			return
		}
		if err != nil {
			t.Fatalf("TaggedQueues(%q, %q): %v", base, tags, err)
		}
		if !slices.Contains(queues, q) || !slices.Contains(queues, base) || len(queues) != 1<<len(tags) {
			t.Fatalf("TaggedQueues(%q, %q) = %q, want %q among 2^%d queues", base, tags, queues, q, len(tags))
		}
	})
}

// FuzzStartIDs: the workflow IDs of signal starts, triggered runs and once starts are made
// from outside input (signal names and keys, run IDs). Each is deterministic, at most 1000
// bytes, printable ASCII without spaces (the Temporal client sends it in a request
// header), and is the readable form exactly when that form is safe.
func FuzzStartIDs(f *testing.F) {
	for _, s := range [][3]string{{"f", "order", "o-1"}, {"a/b", "order", "key with spaces"}, {"f", "order", "ключ"}, {"f", "order", "\x01"}, {"f", "o", strings.Repeat("k", 500)}, {"/x", "", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, flow, name, key string) {
		for _, id := range []string{SignalStartID(flow, name, key), TriggeredID(flow, name, key), OnceID(flow, key)} {
			if len(id) > 1000 {
				t.Fatalf("ID of %d bytes", len(id))
			}
			if !printableASCII(id) && printableASCII(strings.ReplaceAll(flow, "/", "-")) {
				t.Fatalf("ID %q (flow %q, name %q, key %q) is not printable ASCII", id, flow, name, key)
			}
		}
		if SignalStartID(flow, name, key) != SignalStartID(flow, name, key) {
			t.Fatal("not deterministic")
		}
	})
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
