package toolname

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "",
		"triage":                "triage",
		"test.agent.child":      "test_agent_child",
		"delivery/web release":  "delivery_web_release",
		"héllo":                 "h_llo",
		"a-b_C9":                "a-b_C9",
		strings.Repeat("x", 70): strings.Repeat("x", 64),
	} {
		if got := From(in); got != want {
			t.Errorf("From(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every non-empty name becomes a valid tool name, and a valid one stays as it is.
func TestFromAlwaysValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("abcXYZ019_-./ :éß\x00\t日本")
	for range 2000 {
		n := 1 + r.IntN(90)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		in := string(rs)
		out := From(in)
		if !Valid(out) {
			t.Fatalf("From(%q) = %q: not a valid tool name", in, out)
		}
		if Valid(in) && out != in {
			t.Fatalf("From(%q) = %q: a valid name changed", in, out)
		}
		if From(out) != out {
			t.Fatalf("From is not idempotent on %q", in)
		}
	}
}
