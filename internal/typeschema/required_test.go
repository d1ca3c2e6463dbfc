package typeschema_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/typeschema"
	"github.com/gateflow/gateflow/signals"
)

type startBase struct {
	Region string `json:"region"`
}

type StartExtra struct {
	Zone string `json:"zone"`
}

type startInput struct {
	startBase
	*StartExtra
	Version string            `json:"version"`
	DryRun  bool              `json:"dry_run,omitempty"`
	Note    *string           `json:"note"`
	When    int               `json:"when,omitzero"`
	Labels  map[string]string `json:"labels"`
	Skip    string            `json:"-"`
}

func TestForStartRequiresWhatTheHandlerNeeds(t *testing.T) {
	var doc struct {
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(typeschema.ForStart(reflect.TypeFor[startInput]()), &doc))
	assert.Equal(t, []string{"labels", "region", "version"}, doc.Required,
		"not omitempty/omitzero, not pointers, not reached through an embedded pointer")
	assert.NotContains(t, string(typeschema.For(reflect.TypeFor[startInput]())), `"required"`, "For requires nothing")

	s, err := signals.CompileSchema(typeschema.ForStart(reflect.TypeFor[startInput]()))
	require.NoError(t, err)
	for _, c := range []struct{ in, want string }{
		{`{"version":"1","region":"eu","labels":{}}`, ""},
		{`{"version":"1","region":"eu","labels":null,"zone":"a","dry_run":true}`, ""},
		{`{}`, `missing property "labels"; at (root): missing property "region"; at (root): missing property "version"`},
		{`{"region":"eu","labels":{}}`, "version"},
		{`{"Version":"1","region":"eu","labels":{}}`, "version"}, // the exact name counts
		{`null`, ""}, // null is still a zero value, as encoding/json decodes it
	} {
		err := s.Validate(json.RawMessage(c.in))
		if c.want == "" {
			assert.NoError(t, err, c.in)
			continue
		}
		require.Error(t, err, c.in)
		assert.Contains(t, err.Error(), c.want, c.in)
	}
}
