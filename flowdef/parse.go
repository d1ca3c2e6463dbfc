package flowdef

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// kindKeys maps the keyword that decides a node's kind to the kind. An if node is the
// one with `then` (a lone `if` is the guard every node may carry).
var kindKeys = map[string]Kind{
	"uses": KindStep, "set": KindSet, "check": KindCheck, "switch": KindSwitch,
	"then": KindIf, "loop": KindLoop, "parallel": KindParallel, "foreach": KindForeach,
	"call": KindCall, "gate": KindGate, "sleep": KindSleep, "send": KindSend,
	"finish": KindFinish,
}

// commonKeys are valid on every node.
var commonKeys = map[string]bool{
	"id": true, "name": true, "description": true, "if": true, "retry": true,
	"timeout": true, "on_error": true, "on_timeout": true, "cost_limit": true,
	"output_schema": true,
}

// kindExtra are the keys besides its keyword that a kind accepts.
var kindExtra = map[Kind][]string{
	KindStep:     {"with", "service", "cache"},
	KindCheck:    {"message"},
	KindSwitch:   {"cases", "default"},
	KindIf:       {"else"},
	KindParallel: {"fail_fast", "min_success"},
	KindCall:     {"with", "detached"},
}

// kindList is the hint for a node without a kind.
const kindList = "a node needs one of: uses (step), set, check, switch, if+then, loop, parallel, foreach, call, gate, sleep, send, finish"

// ownerOf says which kinds accept a key (for "belongs to" hints).
func ownerOf(key string) []string {
	var out []string
	for k, extra := range kindExtra {
		for _, e := range extra {
			if e == key {
				out = append(out, string(k))
			}
		}
	}
	sort.Strings(out)
	return out
}

func (d *decoder) finishNode(n *Node, vals []*ast.MappingValueNode, unknown []*ast.MappingValueNode) {
	keyPos := map[string]Pos{}
	for _, mv := range vals {
		keyPos[keyString(mv.Key)] = d.pos(mv.Key)
	}
	var kws []string
	for k := range n.Fields {
		if _, ok := kindKeys[k]; ok {
			kws = append(kws, k)
		}
	}
	sort.Slice(kws, func(i, j int) bool {
		return n.Fields[kws[i]].Line*1e6+n.Fields[kws[i]].Col < n.Fields[kws[j]].Line*1e6+n.Fields[kws[j]].Col
	})
	switch {
	case len(kws) == 0 && len(unknown) > 0:
		k := keyString(unknown[0].Key)
		d.c.add(d.pos(unknown[0].Key), kindList, "unknown node kind '%s'", k)
		unknown = unknown[1:]
	case len(kws) == 0:
		d.c.add(n.Pos, kindList, "node has no kind")
	case len(kws) > 1:
		d.c.add(keyPos[kws[1]], "split it into two nodes", "node has two kinds: '%s' and '%s'", kws[0], kws[1])
		n.Kind = kindKeys[kws[0]]
	default:
		n.Kind = kindKeys[kws[0]]
	}
	what := "a node"
	if n.Kind != "" {
		what = "a " + string(n.Kind) + " node"
	}
	for _, mv := range unknown {
		k := keyString(mv.Key)
		names := []string{}
		for c := range commonKeys {
			names = append(names, c)
		}
		names = append(names, kindExtra[n.Kind]...)
		for kw, kind := range kindKeys {
			if kind == n.Kind {
				names = append(names, kw)
			}
		}
		sort.Strings(names)
		d.c.add(d.pos(mv.Key), suggest(k, names), "unknown field '%s' in %s", k, what)
	}
	if n.Kind == "" || len(kws) > 1 {
		return
	}
	allowed := map[string]bool{kws[0]: true}
	for _, e := range kindExtra[n.Kind] {
		allowed[e] = true
	}
	var keys []string
	for k := range n.Fields {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return n.Fields[keys[i]].Line*1e6+n.Fields[keys[i]].Col < n.Fields[keys[j]].Line*1e6+n.Fields[keys[j]].Col
	})
	for _, k := range keys {
		if commonKeys[k] || allowed[k] {
			continue
		}
		if _, isKw := kindKeys[k]; isKw {
			continue
		}
		if owners := ownerOf(k); len(owners) > 0 {
			d.c.add(keyPos[k], "it belongs to "+strings.Join(owners, ", ")+" nodes", "field '%s' is not valid on %s", k, what)
		}
	}
}

// Parse reads one flow definition, YAML or JSON (JSON is YAML to the parser, so one code
// path gives positions for both). Decoding is strict: unknown fields, duplicate keys,
// values of the wrong type, nodes with no kind or two kinds are errors, each with its
// position and a hint, all collected into one *ValidationError. A YAML syntax error is
// reported alone (nothing after it can be trusted).
//
// Before decoding, Parse refuses a file over MaxFileSize and aliases that would expand
// beyond MaxAliasNodes or MaxAliasBytes (or never end), each alone with an error naming
// the limit; it also refuses a definition whose canonical JSON is over MaxFileSize.
//
// When the error is a *ValidationError of structural problems, the returned Definition is
// still non-nil (the offending fields left out), so a caller that wants every problem at
// once can go on with Validate; Check does exactly that.
func Parse(file string, data []byte) (*Definition, error) {
	c := &collector{root: file}
	if !checkSize(c, file, len(data), "the file") {
		return nil, c.result()
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		p := Pos{File: file}
		msg := err.Error()
		var ye yaml.Error
		if errors.As(err, &ye) {
			msg = ye.GetMessage()
			if tk := ye.GetToken(); tk != nil {
				p.Line, p.Col = tk.Position.Line, tk.Position.Column
			}
		}
		c.add(p, "fix the YAML (or JSON) syntax", "syntax error: %s", msg)
		return nil, c.result()
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		if len(f.Docs) > 1 {
			c.add(Pos{File: file, Line: 1, Col: 1}, "put one flow per file", "file holds %d YAML documents", len(f.Docs))
		} else {
			c.add(Pos{File: file, Line: 1, Col: 1}, "start with `name:` and `steps:`", "file is empty")
		}
		return nil, c.result()
	}
	body := f.Docs[0].Body
	if e := checkAliases(file, body); e != nil {
		c.errs = append(c.errs, *e)
		return nil, c.result()
	}
	d := &decoder{file: file, c: c, anchors: map[string]ast.Node{}}
	def := &Definition{}
	d.decode(body, reflect.ValueOf(def).Elem(), "the definition")
	canon, err := json.Marshal(d.generic(body, "the definition"))
	if err == nil && checkSize(c, file, len(canon), "the definition as canonical JSON (what a run records)") {
		def.canonical = canon
	}
	if def.Pos.Line == 0 {
		def.Pos = Pos{File: file, Line: 1, Col: 1}
	}
	return def, c.result()
}

// Hash is the hex sha256 of the definition's canonical bytes: its content as JSON with
// keys sorted, so comments, formatting, key order and YAML-vs-JSON do not change it while
// any value does. A run is pinned to the hash it started with. A Definition built in Go
// (not parsed) hashes its exported fields as JSON.
func (d *Definition) Hash() string {
	b := d.Canonical()
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Canonical is the canonical bytes Hash digests (the content as sorted-key JSON).
func (d *Definition) Canonical() []byte {
	if d.canonical != nil {
		return d.canonical
	}
	b, _ := json.Marshal(d)
	return b
}
