package typeschema_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
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
		{`null`, "at (root): want object, got null"},             // it would leave out what is required
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

type nested struct {
	Host string `json:"host"`
}

type emptyInput struct {
	Version string   `json:"version"`
	Note    string   `json:"note" gateflow:"allowempty"`
	Target  nested   `json:"target"`
	Spare   nested   `json:"spare,omitempty"`
	Count   int      `json:"count"`
	Tags    []string `json:"tags"`
	Opt     *string  `json:"opt"`
}

// TestForStartRefusesEmptyRequiredMembers: a member a start requires must be non-empty:
// a string not blank (what strings.TrimSpace leaves something of), a struct not null;
// `gateflow:"allowempty"` lets it be empty; numbers, booleans, slices may be zero. The
// input of a struct with required members is not null. (Issue 31: `{"version":""}`,
// `{"version":"   "}` and null started runs.)
func TestForStartRefusesEmptyRequiredMembers(t *testing.T) {
	s, err := signals.CompileSchema(typeschema.ForStart(reflect.TypeFor[emptyInput]()))
	require.NoError(t, err)
	ok := `"note":"","target":{"host":"h"},"count":0,"tags":null`
	for _, c := range []struct{ in, want string }{
		{`{"version":"1",` + ok + `}`, ""},
		{`{"version":" v1 ",` + ok + `}`, ""},
		{`{"version":"1","note":"   ","target":{"host":"h"},"count":0,"tags":[],"spare":null,"opt":""}`, ""},
		{`{"version":"1","note":null,"target":{"host":"h"},"count":0,"tags":[]}`, ""},
		{`null`, "at (root): want object, got null"},
		{`{"version":"",` + ok + `}`, `at /version: want a non-blank string (not empty, not only spaces), got ""`},
		{`{"version":"   ",` + ok + `}`, `at /version: want a non-blank string (not empty, not only spaces), got 3 white-space characters`},
		{`{"version":"\u00a0\t",` + ok + `}`, `at /version: want a non-blank string`},
		{`{"version":null,` + ok + `}`, `at /version: want string, got null`},
		{`{"version":"1","note":"","target":null,"count":0,"tags":null}`, `at /target: want object, got null`},
		{`{"version":"1","note":"","target":{"host":" "},"count":0,"tags":null}`, `at /target/host: want a non-blank string`},
		{`{"version":"1","note":"","target":{},"count":0,"tags":null}`, `missing property "host"`},
	} {
		err := s.Validate(json.RawMessage(c.in))
		if c.want == "" {
			assert.NoError(t, err, c.in)
			continue
		}
		require.Error(t, err, c.in)
		assert.Contains(t, err.Error(), c.want, c.in)
	}

	for _, typ := range []reflect.Type{reflect.TypeFor[struct{}](), reflect.TypeFor[struct {
		A string `json:"a,omitempty"`
	}](), reflect.TypeFor[*emptyInput](), reflect.TypeFor[string]()} {
		s, err := signals.CompileSchema(typeschema.ForStart(typ))
		require.NoError(t, err)
		assert.NoError(t, s.Validate(json.RawMessage(`null`)), "%v: nothing required, or a pointer: null is fine", typ)
	}
	s, err = signals.CompileSchema(typeschema.For(reflect.TypeFor[emptyInput]()))
	require.NoError(t, err)
	assert.NoError(t, s.Validate(json.RawMessage(`{"version":"","target":null}`)), "For (answers, signals) requires nothing")
}

// TestForStartRequiredStringIsNonBlankForAnyValue: over many generated strings, a start
// with the required member set to v is accepted exactly when strings.TrimSpace(v) != "".
func TestForStartRequiredStringIsNonBlankForAnyValue(t *testing.T) {
	s, err := signals.CompileSchema(typeschema.ForStart(reflect.TypeFor[struct {
		Version string `json:"version"`
	}]()))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(11, 31))
	blanks := []rune{' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xa0, 0x1680, 0x2003, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0x200b, 'v', '1', '.'}
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := rng.IntN(5); n > 0; n-- {
			b.WriteRune(blanks[rng.IntN(len(blanks))])
		}
		v := b.String()
		in, err := json.Marshal(map[string]string{"version": v})
		require.NoError(t, err)
		err = s.Validate(in)
		assert.Equal(t, strings.TrimSpace(v) != "", err == nil, "%q: %v", v, err)
	}
}
