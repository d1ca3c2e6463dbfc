package flowdef

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed schema.json
var formatSchema []byte

// SchemaURL is the $id of the format's JSON Schema.
const SchemaURL = "https://gateflow.dev/schemas/flowdef.json"

// JSONSchema returns the JSON Schema (draft 2020-12) of the definition format itself, the
// file flowdef/schema.json. Editors with yaml-language-server complete and check
// definitions that start with
//
//	# yaml-language-server: $schema=<path or URL of schema.json>
//
// The schema checks structure (known fields, types, enumerations, one kind keyword per
// node); Validate checks the rest (references, registries, expressions). The returned
// slice is a copy.
func JSONSchema() []byte { return append([]byte(nil), formatSchema...) }

var (
	compileOnce sync.Once
	compiled    *jsonschema.Schema
	compileErr  error
)

// CheckFormat validates a parsed definition's content (its canonical JSON) against
// JSONSchema. It is what an editor would report; Validate reports more and better.
func CheckFormat(def *Definition) error {
	compileOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(formatSchema))
		if err != nil {
			compileErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err = c.AddResource(SchemaURL, doc); err != nil {
			compileErr = err
			return
		}
		compiled, compileErr = c.Compile(SchemaURL)
	})
	if compileErr != nil {
		return fmt.Errorf("flowdef: format schema: %w", compileErr)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(def.Canonical()))
	if err != nil {
		return fmt.Errorf("flowdef: definition is not JSON: %w", err)
	}
	return compiled.Validate(inst)
}
