package flowdef

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestJSONSchemaIsValidJSON(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(JSONSchema(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["$id"] != SchemaURL {
		t.Fatalf("$id = %v, want %s", doc["$id"], SchemaURL)
	}
}

// TestValidTestdataMatchesJSONSchema: every valid definition (and sub-flow) passes the
// published format schema.
func TestValidTestdataMatchesJSONSchema(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*")
	subs, _ := filepath.Glob("testdata/sub/*.yaml")
	for _, f := range append(files, subs...) {
		if b := filepath.Base(f); b == "unparsable.yaml" || b == "broken-2.yaml" { // broken on purpose
			continue
		}
		t.Run(f, func(t *testing.T) {
			data, _ := os.ReadFile(f)
			def, err := Parse(f, data)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckFormat(def); err != nil {
				t.Fatalf("want valid against schema.json:\n%v", err)
			}
		})
	}
}

// TestInvalidTestdataFailsJSONSchema: structural mistakes are caught by the schema too.
func TestInvalidTestdataFailsJSONSchema(t *testing.T) {
	for _, f := range []string{"unknown-field", "unknown-kind", "bad-type", "kind-fields", "enums", "six-errors", "goto-missing", "bad-duration"} {
		t.Run(f, func(t *testing.T) {
			path := "testdata/invalid/" + f + ".yaml"
			data, _ := os.ReadFile(path)
			def, _ := Parse(path, data)
			if def == nil {
				t.Fatal("no definition")
			}
			if err := CheckFormat(def); err == nil {
				t.Fatal("want an error from schema.json, got none")
			}
		})
	}
}
