package flowdef

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// laughs is a "billion laughs" definition: vars l0 = "lol", l_i = a list of widths[i-1]
// aliases of l_{i-1}. It returns the document, what its aliases add once expanded (nodes
// and scalar bytes, as aliasCheck counts them) and how many "lol" the last level holds.
func laughs(widths []int) (doc string, nodes, bytes, lols int64) {
	var b strings.Builder
	b.WriteString("name: laughs\nsteps:\n  - id: a\n    set: {x: 1}\nvars:\n  l0: &l0 lol\n")
	size, sizeBytes, count := int64(1), int64(3), int64(1) // l0: one scalar of 3 bytes
	const ceiling = 1 << 40
	for i, w := range widths {
		fmt.Fprintf(&b, "  l%d: &l%d [", i+1, i+1)
		for j := 0; j < w; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i)
		}
		b.WriteString("]\n")
		nodes = min(nodes+int64(w)*size, ceiling)
		bytes = min(bytes+int64(w)*sizeBytes, ceiling)
		size = min(1+int64(w)*size, ceiling)
		sizeBytes = min(int64(w)*sizeBytes, ceiling)
		count = min(int64(w)*count, ceiling)
	}
	return b.String(), nodes, bytes, count
}

// TestParseBoundsAliasExpansion: over many random alias trees, Parse refuses exactly the
// documents whose aliases expand beyond MaxAliasNodes or MaxAliasBytes, naming the limit,
// and expands the others in full.
func TestParseBoundsAliasExpansion(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	refused, accepted := 0, 0
	for i := 0; i < 400; i++ {
		widths := make([]int, 1+rng.Intn(12))
		for j := range widths {
			widths[j] = 1 + rng.Intn(12)
		}
		doc, nodes, bytes, lols := laughs(widths)
		def, err := Parse("l.yaml", []byte(doc))
		over := nodes > MaxAliasNodes || bytes > MaxAliasBytes
		if over {
			refused++
			if err == nil || !strings.Contains(err.Error(), "flowdef.MaxAlias") || !strings.Contains(err.Error(), "the limit") {
				t.Fatalf("widths %v (aliases add %d nodes, %d bytes): want the alias limit error, got %v", widths, nodes, bytes, err)
			}
			continue
		}
		accepted++
		if err != nil {
			t.Fatalf("widths %v (aliases add %d nodes, %d bytes): %v", widths, nodes, bytes, err)
		}
		if got := int64(strings.Count(string(def.Canonical()), `"lol"`)); got < lols {
			t.Fatalf("widths %v: canonical holds %d lol, want at least %d", widths, got, lols)
		}
	}
	if refused < 50 || accepted < 50 {
		t.Fatalf("the generator is lopsided: %d refused, %d accepted", refused, accepted)
	}
}

// TestParseAliasBombMemory: a billion-laughs file is refused with the limit, allocating
// a few megabytes at most.
func TestParseAliasBombMemory(t *testing.T) {
	doc, _, _, _ := laughs([]int{10, 10, 10, 10, 10, 10, 10, 10, 10})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse("bomb.yaml", []byte(doc))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 10000 nodes (the limit, flowdef.MaxAliasNodes)") {
		t.Fatalf("want the alias limit error, got %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("Parse allocated %d MiB refusing a billion laughs", grew>>20)
	}
}

// TestParseRefusesEndlessAliases: an alias inside the value of its own anchor, or to an
// anchor not yet defined, is an error, not an endless expansion.
func TestParseRefusesEndlessAliases(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"name: a\nsteps: [{id: a, set: {x: 1}}]\nvars: {a: &x [*x]}\n", "alias *x refers to its own anchor"},
		{"name: a\nsteps: [{id: a, set: {x: 1}}]\nvars:\n  a: &x\n    b: [1, {c: *x}]\n", "alias *x refers to its own anchor"},
		{"name: a\nsteps: [{id: a, set: {x: 1}}]\nvars: {a: *y, b: &y 1}\n", "alias *y refers to no anchor defined before it"},
	} {
		_, err := Parse("e.yaml", []byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: want %q, got %v", tt.doc, tt.want, err)
		}
	}
	// A repeated value that is not inside its anchor still works.
	def := mustParse(t, "ok.yaml", "name: a\nsteps: [{id: a, set: {x: 1}}]\nvars: {a: &x {b: 1}, c: *x, d: {<<: *x, e: 2}}\n")
	if got := string(def.Canonical()); !strings.Contains(got, `"c":{"b":1}`) || !strings.Contains(got, `"d":{"b":1,"e":2}`) {
		t.Fatalf("canonical %s", got)
	}
}

// TestParseRefusesLargeFiles: a file over MaxFileSize, or whose canonical JSON is, is
// refused naming the limit; one just under it is accepted.
func TestParseRefusesLargeFiles(t *testing.T) {
	head := "name: big\nsteps: [{id: a, set: {x: 1}}]\n"
	pad := func(n int) string { return head + "#" + strings.Repeat("x", n-len(head)-2) + "\n" }
	if _, err := Parse("ok.yaml", []byte(pad(MaxFileSize))); err != nil {
		t.Fatalf("a file of exactly MaxFileSize bytes: %v", err)
	}
	_, err := Parse("big.yaml", []byte(pad(MaxFileSize+1)))
	if err == nil || !strings.Contains(err.Error(), "big.yaml:1:1: the file is larger than the limit of 1048576 bytes (1 MiB, flowdef.MaxFileSize)") {
		t.Fatalf("want the size limit, got %v", err)
	}
	// 200 KB of '<' become 1.2 MB of JSON, each escaped as \u003c.
	wide := head + "vars: {a: '" + strings.Repeat("<", 200_000) + "'}\n"
	_, err = Parse("wide.yaml", []byte(wide))
	if err == nil || !strings.Contains(err.Error(), "the definition as canonical JSON (what a run records) is larger than the limit") {
		t.Fatalf("want the canonical size limit, got %v", err)
	}
}

// TestReadFileReadsAtMostTheLimit: ReadFile stops one byte past MaxFileSize, so a huge
// file is never read whole, and Parse refuses what it returns.
func TestReadFileReadsAtMostTheLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 32); err != nil { // 4 GiB, sparse
		t.Fatal(err)
	}
	f.Close()
	data, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != MaxFileSize+1 {
		t.Fatalf("read %d bytes, want %d", len(data), MaxFileSize+1)
	}
	if _, err := Parse(path, data); err == nil || !strings.Contains(err.Error(), "flowdef.MaxFileSize") {
		t.Fatalf("want the size limit, got %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.yaml")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}
