package flowctl

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// The output formats of -o.
const (
	formatTable = "table" // for people: tables and sentences
	formatJSON  = "json"  // one indented JSON document (streams: one compact object a line)
	formatJSONL = "jsonl" // one compact JSON object a line: a list's items one by one
)

// formats are the values -o takes.
var formats = []string{formatTable, formatJSON, formatJSONL}

// view is what a command hands the printer: the value for programs and how to write it for
// people. The printer picks which by the format.
type view struct {
	// value is what json and jsonl print, its durations as strings (jsonWithDurations). A
	// list is an array in json ([] when nil) and one line a item in jsonl.
	value any
	// text writes the value for people (-o table); nil writes nothing. Its error is the
	// command's (an exit code for what it printed, say).
	text func(w io.Writer) error
	// err is returned after the value is printed, in every format: the exit code of a
	// result that is printed all the same (a run that ended failed, an invalid file).
	err error
}

// printer writes what commands hand it in the format of -o: the one place that knows the
// formats.
type printer struct {
	format string
	out    io.Writer
}

// printer is the invocation's printer, to standard output.
func (a *app) printer() printer { return printer{format: a.output, out: a.stdout} }

// print writes v with the app's printer.
func (a *app) print(v view) error { return a.printer().print(v) }

// print writes v in p's format, then returns v.err. A view with neither value nor text
// prints nothing (the command wrote its output itself: history's raw JSON).
func (p printer) print(v view) error {
	var err error
	switch {
	case v.value == nil && v.text == nil:
	case p.format == formatJSON:
		err = printJSON(p.out, emptyIfNil(v.value))
	case p.format == formatJSONL:
		err = printJSONL(p.out, v.value)
	case v.text != nil:
		err = v.text(p.out)
	}
	if err != nil {
		return err
	}
	return v.err
}

// event writes one event of a stream (watch, logs): a line of compact JSON in json and
// jsonl, else what text writes.
func (p printer) event(v any, text func(w io.Writer)) {
	if p.format == formatTable {
		text(p.out)
		return
	}
	emitJSON(p.out, v)
}

// note writes a message for people only (json and jsonl print data, and nothing else).
func (p printer) note(format string, a ...any) {
	if p.format == formatTable {
		fmt.Fprintf(p.out, format, a...)
	}
}

// checkFormat checks the value of -o.
func checkFormat(format string) error {
	for _, f := range formats {
		if format == f {
			return nil
		}
	}
	last := len(formats) - 1
	return usageErr("--output %q: want %s or %s", format, strings.Join(formats[:last], ", "), formats[last])
}

// printJSON writes v as indented JSON, its durations as strings ("24h0m0s", see
// jsonWithDurations).
func printJSON(w io.Writer, v any) error {
	out, err := jsonWithDurations(v)
	if err != nil {
		return fmt.Errorf("encode the output as JSON: %w", err)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// printJSONL writes v as compact JSON on one line; a list, one line per item.
func printJSONL(w io.Writer, v any) error {
	if rv := reflect.ValueOf(v); isList(rv) {
		for i := range rv.Len() {
			if err := writeLine(w, rv.Index(i).Interface()); err != nil {
				return err
			}
		}
		return nil
	}
	return writeLine(w, v)
}

// writeLine writes v as one line of compact JSON, its durations as strings.
func writeLine(w io.Writer, v any) error {
	b, err := compactJSON(v)
	if err != nil {
		return fmt.Errorf("encode the output as JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// compactJSON is v as one line of JSON, its durations as strings.
func compactJSON(v any) ([]byte, error) {
	tree, err := jsonWithDurations(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(tree)
}

// emitJSON writes v as one line of JSON (watch and logs print a stream of events), or an
// error event when it cannot be encoded.
func emitJSON(out io.Writer, v any) {
	b, err := compactJSON(v)
	if err != nil {
		fmt.Fprintf(out, `{"event":"error","error":%q}`+"\n", err.Error())
		return
	}
	fmt.Fprintf(out, "%s\n", b)
}

// isList reports whether v is a list of items (a slice or array, but not bytes: raw
// JSON is one value).
func isList(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		return v.Type().Elem().Kind() != reflect.Uint8
	}
	return false
}

// emptyIfNil is v, or an empty list of v's type when v is a nil list: a list prints as []
// rather than null.
func emptyIfNil(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.IsNil() && isList(rv) {
		return reflect.MakeSlice(rv.Type(), 0, 0).Interface()
	}
	return v
}

// say is the text of a view that is one message for people.
func say(format string, a ...any) func(w io.Writer) error {
	return func(w io.Writer) error {
		_, err := fmt.Fprintf(w, format, a...)
		return err
	}
}
