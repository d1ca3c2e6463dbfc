package flowdef

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// sprintf is fmt.Sprintf (short name for the many messages).
func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// scalarSetter is implemented by AST types written as one string (OnError).
type scalarSetter interface{ setScalar(s string, p Pos) }

var (
	posType    = reflect.TypeOf(Pos{})
	fieldsType = reflect.TypeOf(Fields{})
	schemaType = reflect.TypeOf(Schema{})
	nodeType   = reflect.TypeOf(Node{})
	anyType    = reflect.TypeOf((*any)(nil)).Elem()
)

// typeLabels name the AST structs in messages.
var typeLabels = map[reflect.Type]string{
	reflect.TypeOf(Definition{}):  "the definition",
	reflect.TypeOf(Limits{}):      "limits",
	reflect.TypeOf(Concurrency{}): "concurrency",
	reflect.TypeOf(Schedule{}):    "a schedule",
	reflect.TypeOf(Trigger{}):     "a trigger",
	reflect.TypeOf(Retry{}):       "retry",
	reflect.TypeOf(Cache{}):       "cache",
	reflect.TypeOf(Case{}):        "a case",
	reflect.TypeOf(Loop{}):        "loop",
	reflect.TypeOf(Foreach{}):     "foreach",
	reflect.TypeOf(Gate{}):        "gate",
	reflect.TypeOf(Send{}):        "send",
	reflect.TypeOf(Finish{}):      "finish",
}

// decoder turns a goccy/go-yaml AST into the flowdef AST, strictly: unknown and
// duplicate keys and values of the wrong type are errors with their position, all
// collected.
type decoder struct {
	file    string
	c       *collector
	anchors map[string]ast.Node
}

func (d *decoder) pos(n ast.Node) Pos {
	if n == nil || n.GetToken() == nil {
		return Pos{File: d.file}
	}
	if vals, ok := mappingValues(n); ok && len(vals) > 0 {
		if m, flow := n.(*ast.MappingNode); !flow || !m.IsFlowStyle {
			n = vals[0].Key // a block mapping starts at its first key
		}
	}
	tk := n.GetToken()
	return Pos{File: d.file, Line: tk.Position.Line, Col: tk.Position.Column}
}

// recordPaths stores in fields the position of every value nested in n, by dotted path
// (with.env.A, with.args[0]), so that errors inside free-form values point at them.
func (d *decoder) recordPaths(prefix string, n ast.Node, fields Fields) {
	n = d.unwrap(n)
	switch t := n.(type) {
	case *ast.SequenceNode:
		for i, e := range t.Values {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			fields[p] = d.pos(d.unwrap(e))
			d.recordPaths(p, e, fields)
		}
	case *ast.MappingNode, *ast.MappingValueNode:
		vals, _ := mappingValues(t)
		for _, mv := range vals {
			p := prefix + "." + keyString(mv.Key)
			fields[p] = d.pos(d.unwrap(mv.Value))
			d.recordPaths(p, mv.Value, fields)
		}
	}
}

// unwrap resolves tags, anchors and aliases.
func (d *decoder) unwrap(n ast.Node) ast.Node {
	for i := 0; i < 32; i++ {
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			if name, ok := t.Name.(*ast.StringNode); ok {
				d.anchors[name.Value] = t.Value
			}
			n = t.Value
		case *ast.AliasNode:
			if name, ok := t.Value.(*ast.StringNode); ok {
				if target, ok := d.anchors[name.Value]; ok {
					n = target
					continue
				}
			}
			return n
		default:
			return n
		}
	}
	return n
}

func kindName(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NullNode, nil:
		return "null"
	}
	return "an unsupported value"
}

// mappingValues gives the entries of a mapping (a single-entry mapping parses as a
// MappingValueNode).
func mappingValues(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, true
	}
	return nil, false
}

func keyString(k ast.MapKeyNode) string {
	switch t := k.(type) {
	case *ast.StringNode:
		return t.Value
	case *ast.MappingKeyNode:
		if t.Value != nil {
			return t.Value.GetToken().Value
		}
	}
	if k == nil || k.GetToken() == nil {
		return ""
	}
	return k.GetToken().Value
}

// generic converts a YAML value to plain Go (map[string]any, []any, string, int64,
// float64, bool, nil), as encoding/json would produce from the same JSON.
func (d *decoder) generic(n ast.Node, what string) any {
	n = d.unwrap(n)
	switch t := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.StringNode:
		return t.Value
	case *ast.LiteralNode:
		return t.Value.Value
	case *ast.IntegerNode:
		switch v := t.Value.(type) {
		case int64:
			return v
		case uint64:
			return float64(v)
		}
		return t.Value
	case *ast.FloatNode:
		return t.Value
	case *ast.BoolNode:
		return t.Value
	case *ast.SequenceNode:
		out := make([]any, 0, len(t.Values))
		for _, v := range t.Values {
			out = append(out, d.generic(v, what))
		}
		return out
	case *ast.MappingNode, *ast.MappingValueNode:
		vals, _ := mappingValues(t)
		out := make(map[string]any, len(vals))
		for _, mv := range vals {
			if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
				if m, ok := d.generic(mv.Value, what).(map[string]any); ok {
					for k, v := range m {
						if _, set := out[k]; !set {
							out[k] = v
						}
					}
				}
				continue
			}
			k := keyString(mv.Key)
			if _, dup := out[k]; dup {
				d.c.add(d.pos(mv.Key), "remove one of them", "%s: duplicate key '%s'", what, k)
			}
			out[k] = d.generic(mv.Value, what+"."+k)
		}
		return out
	}
	d.c.add(d.pos(n), "write plain YAML or JSON values", "%s: unsupported value", what)
	return nil
}

// decode fills v (addressable) from n; what names the value in messages.
func (d *decoder) decode(n ast.Node, v reflect.Value, what string) {
	n = d.unwrap(n)
	t := v.Type()
	if v.CanAddr() {
		if s, ok := v.Addr().Interface().(scalarSetter); ok {
			str, ok := n.(*ast.StringNode)
			if !ok {
				d.c.add(d.pos(n), `write it as a string such as "fail", "continue" or "goto <id>"`, "%s: want a string, got %s", what, kindName(n))
				return
			}
			s.setScalar(str.Value, d.pos(n))
			return
		}
	}
	switch {
	case t == schemaType:
		raw, err := json.Marshal(d.generic(n, what))
		if err != nil {
			d.c.add(d.pos(n), "write a JSON Schema object", "%s: not representable as JSON: %v", what, err)
			return
		}
		v.Set(reflect.ValueOf(Schema{Pos: d.pos(n), JSON: raw}))
		return
	case t == anyType:
		if g := d.generic(n, what); g != nil {
			v.Set(reflect.ValueOf(g))
		}
		return
	}
	if _, null := n.(*ast.NullNode); null || n == nil {
		return // null leaves the zero value
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		d.decode(n, p.Elem(), what)
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, v, what)
	case reflect.Slice:
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			d.c.add(d.pos(n), "write a YAML list (lines starting with '- ') or a JSON array", "%s: want a list, got %s", what, kindName(n))
			return
		}
		s := reflect.MakeSlice(t, len(seq.Values), len(seq.Values))
		for i, e := range seq.Values {
			d.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", what, i))
		}
		v.Set(s)
	case reflect.Map:
		vals, ok := mappingValues(n)
		if !ok {
			d.c.add(d.pos(n), "write a mapping of names to values", "%s: want a mapping, got %s", what, kindName(n))
			return
		}
		m := reflect.MakeMapWithSize(t, len(vals))
		for _, mv := range vals {
			k := keyString(mv.Key)
			if m.MapIndex(reflect.ValueOf(k)).IsValid() {
				d.c.add(d.pos(mv.Key), "remove one of them", "%s: duplicate key '%s'", what, k)
			}
			e := reflect.New(t.Elem()).Elem()
			d.decode(mv.Value, e, what+"."+k)
			m.SetMapIndex(reflect.ValueOf(k), e)
		}
		v.Set(m)
	case reflect.String:
		switch s := n.(type) {
		case *ast.StringNode:
			v.SetString(s.Value)
		case *ast.LiteralNode:
			v.SetString(s.Value.Value)
		case *ast.IntegerNode, *ast.FloatNode:
			v.SetString(s.GetToken().Value) // versions, amounts: keep the digits as written
		default:
			d.c.add(d.pos(n), "quote it", "%s: want a string, got %s", what, kindName(n))
		}
	case reflect.Int:
		i, ok := n.(*ast.IntegerNode)
		if !ok {
			d.c.add(d.pos(n), "write a whole number such as 3", "%s: want an integer, got %s", what, kindName(n))
			return
		}
		x, err := strconv.ParseInt(strings.ReplaceAll(i.GetToken().Value, "_", ""), 0, 64)
		if err != nil {
			d.c.add(d.pos(n), "write a whole number such as 3", "%s: integer %s out of range", what, i.GetToken().Value)
			return
		}
		v.SetInt(x)
	case reflect.Float64:
		switch f := n.(type) {
		case *ast.IntegerNode, *ast.FloatNode:
			x, err := strconv.ParseFloat(f.GetToken().Value, 64)
			if err != nil {
				d.c.add(d.pos(n), "write a number such as 0.8", "%s: bad number %s", what, f.GetToken().Value)
				return
			}
			v.SetFloat(x)
		default:
			d.c.add(d.pos(n), "write a number such as 0.8", "%s: want a number, got %s", what, kindName(n))
		}
	case reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			d.c.add(d.pos(n), "write true or false", "%s: want a boolean, got %s", what, kindName(n))
			return
		}
		v.SetBool(b.Value)
	default:
		panic("flowdef: cannot decode into " + t.String())
	}
}

// structFields maps yaml keys to field indexes.
func structFields(t reflect.Type) (map[string]int, []string) {
	idx := map[string]int{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		idx[tag] = i
		names = append(names, tag)
	}
	sort.Strings(names)
	return idx, names
}

func (d *decoder) decodeStruct(n ast.Node, v reflect.Value, what string) {
	t := v.Type()
	label := typeLabels[t]
	if label == "" {
		label = what
	}
	vals, ok := mappingValues(n)
	if !ok {
		d.c.add(d.pos(n), "write a mapping of keys to values", "%s: want a mapping, got %s", what, kindName(n))
		return
	}
	idx, names := structFields(t)
	fields := Fields{}
	var unknown []*ast.MappingValueNode
	failed := map[string]bool{}
	for _, mv := range vals {
		k := keyString(mv.Key)
		if _, dup := fields[k]; dup {
			d.c.add(d.pos(mv.Key), "remove one of them", "duplicate field '%s' in %s", k, label)
			continue
		}
		fields[k] = d.pos(d.unwrap(mv.Value))
		i, known := idx[k]
		if !known {
			unknown = append(unknown, mv)
			continue
		}
		before := len(d.c.errs)
		d.decode(mv.Value, v.Field(i), k)
		if len(d.c.errs) > before {
			failed[k] = true
		}
		if fk := v.Field(i).Kind(); fk == reflect.Map || fk == reflect.Interface {
			d.recordPaths(k, mv.Value, fields)
		}
	}
	if f := v.FieldByName("Pos"); f.IsValid() && f.Type() == posType {
		f.Set(reflect.ValueOf(d.pos(n)))
	}
	if f := v.FieldByName("Fields"); f.IsValid() && f.Type() == fieldsType {
		f.Set(reflect.ValueOf(fields))
	}
	if t == nodeType {
		n := v.Addr().Interface().(*Node)
		n.badType = failed
		d.finishNode(n, vals, unknown)
		return
	}
	for _, mv := range unknown {
		k := keyString(mv.Key)
		d.c.add(d.pos(mv.Key), suggest(k, names), "unknown field '%s' in %s", k, label)
	}
}

// suggest is a hint naming the closest known name, or listing them.
func suggest(k string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if dd := distance(k, n); dd < bestD {
			best, bestD = n, dd
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean '%s'?", best)
	}
	return "known fields: " + strings.Join(names, ", ")
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
