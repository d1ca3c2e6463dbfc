package typeschema

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// field is one JSON object member of a struct type, found the way encoding/json's
// typeFields finds it (encoding/json/encode.go): embedded structs are flattened level by
// level, a shallower field hides a deeper one of the same name, at the same depth a
// tagged field hides an untagged one, and otherwise same-depth duplicates hide each other.
type field struct {
	name  string
	tag   bool         // the name came from a json tag
	index []int        // index sequence from the outer struct
	typ   reflect.Type // the field's declared type
	// quoted: the ",string" option applies (the field, after one unnamed pointer, is a
	// bool, number or string).
	quoted bool
	// blocked: decoding this member fails whatever its value, because encoding/json
	// cannot allocate an embedded pointer to an unexported struct on the way to it (it
	// reports an error) or as it (it panics).
	blocked bool
	// optional: omitempty or omitzero, a pointer, or reached through an embedded pointer
	// (ForStart does not require it).
	optional bool
	// allowEmpty: the tag `gateflow:"allowempty"` lets a required member be empty (ForStart
	// still requires it, but takes "", a blank string or null).
	allowEmpty bool
}

// embedded is a struct to scan for promoted fields at the next level.
type embedded struct {
	index    []int
	typ      reflect.Type
	blocked  bool
	optional bool // reached through an embedded pointer
}

// structFields returns the JSON members of struct type t in index order.
func structFields(t reflect.Type) []field {
	var current []embedded
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []field

	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := 0; i < e.typ.NumField(); i++ {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !isValidTag(name) {
					name = ""
				}
				index := append(slices.Clip(e.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				// An unexported embedded pointer cannot be set through reflection.
				unsettablePtr := sf.Anonymous && !sf.IsExported() && sf.Type.Kind() == reflect.Pointer
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{
						name:    name,
						tag:     name != "",
						index:   index,
						typ:     sf.Type,
						quoted:  hasOption(opts, "string") && quotable(ft.Kind()),
						blocked: e.blocked || unsettablePtr,
						optional: e.optional || sf.Type.Kind() == reflect.Pointer ||
							hasOption(opts, "omitempty") || hasOption(opts, "omitzero"),
						allowEmpty: hasOption(sf.Tag.Get("gateflow"), AllowEmpty),
					}
					if f.name == "" {
						f.name = sf.Name
					}
					fields = append(fields, f)
					if count[e.typ] > 1 {
						// The same struct embedded twice at this level: add a duplicate
						// so that both copies hide each other below.
						fields = append(fields, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, embedded{index: index, typ: ft, blocked: e.blocked || unsettablePtr,
						optional: e.optional || sf.Type.Kind() == reflect.Pointer})
				}
			}
		}
	}

	slices.SortFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tag != b.tag {
			if a.tag {
				return -1
			}
			return +1
		}
		return slices.Compare(a.index, b.index)
	})
	out := fields[:0]
	for advance, i := 0, 0; i < len(fields); i += advance {
		advance = 1
		for i+advance < len(fields) && fields[i+advance].name == fields[i].name {
			advance++
		}
		group := fields[i : i+advance]
		if len(group) > 1 && len(group[0].index) == len(group[1].index) && group[0].tag == group[1].tag {
			continue // ambiguous: encoding/json drops the name
		}
		out = append(out, group[0])
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// quotable reports whether the ",string" option applies to a field of kind k.
func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.String:
		return true
	}
	return false
}

// isValidTag is encoding/json's rule for a usable tag name; others fall back to the Go
// field name.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// foldKey is encoding/json's foldName: two member names match case-insensitively when
// their fold keys are equal.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is the smallest rune of r's case-folding orbit; for ASCII that is the upper
// case letter, as encoding/json has it.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// orbit returns the runes that fold to the same key as r, in increasing order.
func orbit(r rune) []rune {
	out := []rune{r}
	for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}

// foldPattern returns an anchored regular expression matching the object keys that
// encoding/json decodes into the member called name: every string with name's fold key
// except the names in exclude (the other members with that fold key, which keys equal to
// their own names reach). It is written with character classes, not a (?i) flag, so it
// means the same in Go and ECMA-262 regular expressions, and it folds exactly as
// encoding/json does (k also matches the Kelvin sign).
func foldPattern(name string, exclude []string) string {
	ex := make([][]rune, 0, len(exclude))
	for _, e := range exclude {
		ex = append(ex, []rune(e))
	}
	body, ok := foldFrom([]rune(name), ex)
	if !ok {
		body = "[^\\s\\S]" // matches nothing; cannot happen for distinct names
	}
	return "^" + body + "$"
}

// foldFrom matches the fold variants of rs that equal none of ex (each as long as rs).
func foldFrom(rs []rune, ex [][]rune) (string, bool) {
	if len(ex) == 0 {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(runeClass(orbit(r)))
		}
		return b.String(), true
	}
	if len(rs) == 0 {
		return "", false // equals an excluded name
	}
	var alts []string
	taken := map[rune]bool{}
	for _, c := range orbit(rs[0]) {
		var sub [][]rune
		for _, e := range ex {
			if len(e) > 0 && e[0] == c {
				sub = append(sub, e[1:])
			}
		}
		if len(sub) == 0 {
			continue
		}
		taken[c] = true
		if rest, ok := foldFrom(rs[1:], sub); ok {
			alts = append(alts, runeClass([]rune{c})+rest)
		}
	}
	var free []rune
	for _, c := range orbit(rs[0]) {
		if !taken[c] {
			free = append(free, c)
		}
	}
	if len(free) > 0 {
		rest, _ := foldFrom(rs[1:], nil)
		alts = append(alts, runeClass(free)+rest)
	}
	switch len(alts) {
	case 0:
		return "", false
	case 1:
		return alts[0], true
	}
	return "(?:" + strings.Join(alts, "|") + ")", true
}

// runeClass matches one of rs: the rune itself or a bracket class, with the characters
// that are special in regular expressions escaped.
func runeClass(rs []rune) string {
	var b strings.Builder
	if len(rs) > 1 {
		b.WriteByte('[')
	}
	for _, r := range rs {
		if r < 0x80 && strings.ContainsRune(`\^$.|?*+()[]{}/`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	if len(rs) > 1 {
		b.WriteByte(']')
	}
	return b.String()
}
