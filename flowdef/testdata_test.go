package flowdef

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .errors golden files of testdata/invalid")

// testRegistry is the worker the testdata is validated against.
func testRegistry() *StaticRegistry {
	return &StaticRegistry{
		Actions:       []string{"post-comment", "page-oncall", "cleanup-workspace"},
		ItemProviders: []string{"open-tickets"},
		GateTypes:     []string{"ci-status"},
		GoFlows:       []string{"notify-team", "deploy"},
		MCPServers:    []string{"triage"},
		Dir:           "testdata/sub",
	}
}

func TestValidTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*")
	if len(files) < 3 {
		t.Fatalf("want at least 3 valid definitions, got %d", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Check(f, data, testRegistry()); err != nil {
				t.Fatalf("want valid, got:\n%v", err)
			}
		})
	}
}

// TestInvalidTestdata checks each testdata/invalid/X.yaml against X.errors, the exact
// messages (one per line, file:line:col: message (hint: ...)). go test -update rewrites
// the goldens.
func TestInvalidTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no invalid testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Check(f, data, testRegistry())
			if err == nil {
				t.Fatal("want errors, got none")
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".yaml") + ".errors"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("errors differ\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

// TestDocExampleIsTestdata keeps the example of doc.go and testdata/valid/doc-example.yaml
// the same, so the documented example is validated.
func TestDocExampleIsTestdata(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("testdata/valid/doc-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(file), "\n"), "\n") {
		lines = append(lines, "\t"+l)
	}
	if !strings.Contains(string(doc), strings.Join(lines, "\n")+"\n\n# Nodes") {
		t.Fatal("the example in doc.go differs from testdata/valid/doc-example.yaml")
	}
}
