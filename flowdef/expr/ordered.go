package expr

import (
	"fmt"
	"reflect"
	"sort"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
)

// Replay safety: CEL maps are Go maps underneath, and Go randomizes their iteration
// order, so `m.map(k, k)` or `m.all(k, ...)` (which stops at the first false) could give
// a different result on replay. Every map an expression sees is therefore a sortedMap:
// maps from the activation are built as one (toVal), and maps an expression builds (map
// literals, transformMap, a function's result) are wrapped by orderMaps, a decorator on
// every interpretable that is not a variable or field read.

// sortedMap is a CEL map whose iteration is in key order.
type sortedMap struct {
	traits.Mapper
}

// Iterator iterates the keys in order: strings lexicographically, numbers numerically,
// false before true, mixed kinds by kind name.
func (m sortedMap) Iterator() traits.Iterator {
	var keys []ref.Val
	it := m.Mapper.Iterator()
	for it.HasNext() == types.True {
		keys = append(keys, it.Next())
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	return &keyIterator{keys: keys}
}

func keyLess(a, b ref.Val) bool {
	switch x := a.(type) {
	case types.String:
		if y, ok := b.(types.String); ok {
			return x < y
		}
	case types.Int:
		if y, ok := b.(types.Int); ok {
			return x < y
		}
	case types.Uint:
		if y, ok := b.(types.Uint); ok {
			return x < y
		}
	case types.Bool:
		if y, ok := b.(types.Bool); ok {
			return !bool(x) && bool(y)
		}
	}
	ta, tb := a.Type().TypeName(), b.Type().TypeName()
	if ta != tb {
		return ta < tb
	}
	return fmt.Sprint(a.Value()) < fmt.Sprint(b.Value())
}

// keyIterator walks a fixed key list.
type keyIterator struct {
	keys []ref.Val
	i    int
}

func (it *keyIterator) HasNext() ref.Val { return types.Bool(it.i < len(it.keys)) }

func (it *keyIterator) Next() ref.Val {
	if it.i >= len(it.keys) {
		return nil
	}
	k := it.keys[it.i]
	it.i++
	return k
}

func (it *keyIterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}
func (it *keyIterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("no such overload") }
func (it *keyIterator) Equal(ref.Val) ref.Val          { return types.NewErr("no such overload") }
func (it *keyIterator) Type() ref.Type                 { return types.IteratorType }
func (it *keyIterator) Value() any                     { return nil }

// order wraps an immutable map so it iterates in key order; other values are returned as
// they are. Mutable maps (a comprehension's accumulator) are left alone.
func order(v ref.Val) ref.Val {
	if _, done := v.(sortedMap); done {
		return v
	}
	if _, mutable := v.(traits.MutableMapper); mutable {
		return v
	}
	if m, ok := v.(traits.Mapper); ok {
		return sortedMap{m}
	}
	return v
}

// toVal converts a normalized JSON-like value to a CEL value with ordered maps.
func toVal(v any) ref.Val {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[ref.Val]ref.Val, len(x))
		for k, e := range x {
			m[types.String(k)] = toVal(e)
		}
		return sortedMap{types.NewRefValMap(types.DefaultTypeAdapter, m)}
	case []any:
		l := make([]ref.Val, len(x))
		for i, e := range x {
			l[i] = toVal(e)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, l)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// orderMaps is the interpreter decorator that makes every computed map a sortedMap.
func orderMaps(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	switch x := i.(type) {
	case interpreter.InterpretableAttribute:
		return i, nil
	case interpreter.InterpretableConst:
		if m, ok := x.Value().(traits.Mapper); ok {
			return interpreter.NewConstValue(x.ID(), order(m)), nil
		}
		return i, nil
	case interpreter.InterpretableCall:
		return orderedCall{x}, nil
	case interpreter.InterpretableConstructor:
		return orderedConstructor{x}, nil
	}
	return ordered{i}, nil
}

type ordered struct{ interpreter.InterpretableV2 }

func (o ordered) Eval(a interpreter.Activation) ref.Val { return order(o.InterpretableV2.Eval(a)) }

func (o ordered) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return order(o.InterpretableV2.Exec(f))
}

type orderedCall struct{ interpreter.InterpretableCall }

func (o orderedCall) Eval(a interpreter.Activation) ref.Val {
	return order(o.InterpretableCall.Eval(a))
}

func (o orderedCall) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return order(o.InterpretableCall.Exec(f))
}

type orderedConstructor struct {
	interpreter.InterpretableConstructor
}

func (o orderedConstructor) Eval(a interpreter.Activation) ref.Val {
	return order(o.InterpretableConstructor.Eval(a))
}

func (o orderedConstructor) Exec(f *interpreter.ExecutionFrame) ref.Val {
	return order(o.InterpretableConstructor.Exec(f))
}
