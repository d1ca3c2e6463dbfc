package signals

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blankRunes are the runes strings.TrimSpace trims, and a few that look blank but are not.
var blankRunes = []rune{'\t', '\n', '\v', '\f', '\r', ' ', 0x85, 0xa0, 0x1680, 0x2000, 0x2005, 0x200a,
	0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0x200b, 0xfeff, 0x180e, 0}

// TestNonBlankPatternIsTrimSpace: every rune matches the pattern exactly when it is not
// white space to unicode.IsSpace, so a string matches exactly when strings.TrimSpace
// leaves something of it; checked for every rune and for random strings, by Go's regexp
// and by the schema engine.
func TestNonBlankPatternIsTrimSpace(t *testing.T) {
	re := regexp.MustCompile(NonBlankPattern)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if re.MatchString(string(r)) == unicode.IsSpace(r) {
			t.Fatalf("rune %U: match %v, unicode.IsSpace %v", r, re.MatchString(string(r)), unicode.IsSpace(r))
		}
	}
	s, err := CompileSchema(json.RawMessage(`{"type":"string","pattern":` + mustJSON(t, NonBlankPattern) + `}`))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(31, 11))
	for i := 0; i < 20000; i++ {
		v := randomBlankish(rng)
		want := strings.TrimSpace(v) != ""
		assert.Equal(t, want, re.MatchString(v), "%q", v)
		err := s.Validate(json.RawMessage(mustJSON(t, v)))
		if want {
			assert.NoError(t, err, "%q", v)
		} else if assert.Error(t, err, "%q", v) {
			assert.Regexp(t, `at \(root\): want a non-blank string \(not empty, not only spaces\), got (""|1 white-space character|\d+ white-space characters)$`, err.Error())
		}
	}
}

// FuzzNonBlankPattern: the pattern matches exactly the strings TrimSpace leaves something of.
func FuzzNonBlankPattern(f *testing.F) {
	for _, s := range []string{"", " ", "\u3000x", "\u00a0", "v1", "\t\n"} {
		f.Add(s)
	}
	re := regexp.MustCompile(NonBlankPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // JSON strings are valid UTF-8
		}
		if re.MatchString(s) != (strings.TrimSpace(s) != "") {
			t.Fatalf("%q: match %v, TrimSpace %q", s, re.MatchString(s), strings.TrimSpace(s))
		}
	})
}

// randomBlankish is a short string mostly of blank runes, sometimes with another rune.
func randomBlankish(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(6); n > 0; n-- {
		switch rng.IntN(10) {
		case 0:
			b.WriteRune(rune(0x21 + rng.IntN(0x5e)))
		case 1:
			r := rune(rng.IntN(unicode.MaxRune))
			if utf8.ValidRune(r) {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(blankRunes[rng.IntN(len(blankRunes))])
		}
	}
	return b.String()
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
