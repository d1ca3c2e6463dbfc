package main

import (
	"os"
	"strings"
	"testing"
)

// The README's "Your own flows" shows this file whole: the two must not drift apart.
func TestREADMEShowsThisFile(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- examples/worker/main.go"
	_, rest, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("README.md has no %q marker before the copy of examples/worker/main.go", marker)
	}
	_, rest, ok = strings.Cut(rest, "```go\n")
	if !ok {
		t.Fatal("README.md: no ```go block after the examples/worker/main.go marker")
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("README.md: the examples/worker/main.go block is not closed")
	}
	if block != string(src) {
		t.Errorf("README.md's copy of examples/worker/main.go differs from the file; paste the file again between the marker's ```go and ```")
	}
}

func TestEnvOr(t *testing.T) {
	t.Setenv("GATEFLOW_EXAMPLE_TEST", "")
	if got := envOr("GATEFLOW_EXAMPLE_TEST", "my-flows"); got != "my-flows" {
		t.Errorf("envOr of an empty variable = %q, want the default", got)
	}
	t.Setenv("GATEFLOW_EXAMPLE_TEST", "q")
	if got := envOr("GATEFLOW_EXAMPLE_TEST", "my-flows"); got != "q" {
		t.Errorf("envOr = %q, want q", got)
	}
}
