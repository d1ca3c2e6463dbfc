package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// FuzzServiceFlag feeds arbitrary --service values to the parser: it refuses or returns a
// service named by the text before "=", never panics.
func FuzzServiceFlag(f *testing.F) {
	for _, s := range []string{"github", "github=rate:5,concurrent:2", "x=failures:3,open:10s", "x=ratio:0.5,min:10,interval:1m",
		"x=breaker", "=rate:1", "x=rate:", "x=rate:1e309", "x=probes:-1", "x=open:-5s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, err := parseService(v)
		if err != nil {
			return
		}
		name, _, _ := strings.Cut(v, "=")
		if d.Name != strings.TrimSpace(name) {
			t.Fatalf("parseService(%q) named the service %q", v, d.Name)
		}
		if d.Options.RatePerSecond < 0 || d.Options.MaxConcurrent < 0 {
			t.Fatalf("parseService(%q) accepted negative limits: %+v", v, d.Options)
		}
	})
}

// FuzzAuthRuleFlag feeds arbitrary --auth-rule values: refused, or a rule for budget or
// pause listing at least one name, never a panic.
func FuzzAuthRuleFlag(f *testing.F) {
	for _, s := range []string{"budget=group:admins,creator", "pause=olga", "vote=x", "budget=", "budget", "=x", "budget= , ,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		var a authFlags
		fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		a.register(fs)
		if err := fs.Parse([]string{"--auth-rule", v}); err != nil {
			return
		}
		if len(a.rules) != 1 {
			t.Fatalf("%q gave %d rules", v, len(a.rules))
		}
		for kind, who := range a.rules {
			if (kind != "budget" && kind != "pause" && kind != "cancel") || len(who) == 0 {
				t.Fatalf("%q gave the rule %s=%v", v, kind, who)
			}
		}
	})
}
