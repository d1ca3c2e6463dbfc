package typeschema_test

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/gateflow/gateflow/internal/typeschema"
)

// ReleaseInput is a flow's input, as in flow's examples.
type ReleaseInput struct {
	Version string   `json:"version"`
	Targets []string `json:"targets,omitempty"`
	DryRun  bool     `json:"dry_run"`
}

func Example() {
	// For gives the document, e.g. to publish it; keys come out sorted.
	fmt.Println(string(typeschema.For(reflect.TypeFor[ReleaseInput]())))

	// Compile gives the schema that checks input, with signals' messages.

	s, err := typeschema.Compile(reflect.TypeFor[ReleaseInput]())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, input := range []string{
		`{"version":"1.2.3","targets":["eu","us"]}`,
		`{"Version":"1.2.3"}`,
		`{"version":"1.2.3","targets":["eu","us",3]}`,
		`{"versoin":"1.2.3"}`,
	} {
		fmt.Println(s.Validate(json.RawMessage(input)))
	}
	// Output:
	// {"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"patternProperties":{"^[Dd][Rr][Yy]_[Rr][Uu][Nn]$":{"type":["boolean","null"]},"^[Tt][Aa][Rr][Gg][Ee][Tt][Ssſ]$":{"items":{"type":["string","null"]},"type":["array","null"]},"^[Vv][Ee][Rr][Ssſ][Ii][Oo][Nn]$":{"type":["string","null"]}},"properties":{"dry_run":{"type":["boolean","null"]},"targets":{"items":{"type":["string","null"]},"type":["array","null"]},"version":{"type":["string","null"]}},"type":["object","null"]}
	// <nil>
	// <nil>
	// payload does not match the schema: at /targets/2: want null or string, got number
	// payload does not match the schema: at (root): property "versoin" not allowed
}
