package flowctl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPrinter is a printer to out, of JSON (a stream's lines) or for people.
func testPrinter(out io.Writer, asJSON bool) printer {
	if asJSON {
		return printer{format: formatJSON, out: out}
	}
	return printer{format: formatTable, out: out}
}

// printed is what p writes of v in format.
func printed(t *testing.T, format string, v view) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := printer{format: format, out: &out}.print(v)
	return out.String(), err
}

type printerItem struct {
	Name    string        `json:"name"`
	Timeout time.Duration `json:"timeout"`
}

func itemsText(items []printerItem) func(io.Writer) error {
	return func(w io.Writer) error {
		t := newTable(w, "NAME", "TIMEOUT")
		for _, it := range items {
			t.row(it.Name, it.Timeout.String())
		}
		return t.flush()
	}
}

func TestPrinterList(t *testing.T) {
	items := []printerItem{{"a", time.Minute}, {"b", 90 * time.Second}}
	v := view{value: items, text: itemsText(items)}
	out, err := printed(t, formatTable, v)
	require.NoError(t, err)
	assert.Equal(t, "NAME  TIMEOUT\na     1m0s\nb     1m30s\n", out)
	out, err = printed(t, formatJSON, v)
	require.NoError(t, err)
	assert.Equal(t, "[\n  {\n    \"name\": \"a\",\n    \"timeout\": \"1m0s\"\n  },\n  {\n    \"name\": \"b\",\n    \"timeout\": \"1m30s\"\n  }\n]\n", out)
	out, err = printed(t, formatJSONL, v)
	require.NoError(t, err)
	assert.Equal(t, "{\"name\":\"a\",\"timeout\":\"1m0s\"}\n{\"name\":\"b\",\"timeout\":\"1m30s\"}\n", out)
}

func TestPrinterEmptyList(t *testing.T) {
	var none []printerItem
	v := view{value: none, text: itemsText(none)}
	out, _ := printed(t, formatJSON, v)
	assert.Equal(t, "[]\n", out, "a nil list is an empty array, not null")
	out, _ = printed(t, formatJSONL, v)
	assert.Empty(t, out, "no items, no lines")
	out, _ = printed(t, formatTable, v)
	assert.Equal(t, "NAME  TIMEOUT\n", out)
}

func TestPrinterSingleValue(t *testing.T) {
	it := printerItem{"a", 24 * time.Hour}
	v := view{value: it, text: func(w io.Writer) error { _, err := fmt.Fprintf(w, "Item %s.\n", it.Name); return err }}
	out, _ := printed(t, formatTable, v)
	assert.Equal(t, "Item a.\n", out)
	out, _ = printed(t, formatJSON, v)
	assert.Equal(t, "{\n  \"name\": \"a\",\n  \"timeout\": \"24h0m0s\"\n}\n", out)
	out, _ = printed(t, formatJSONL, v)
	assert.Equal(t, "{\"name\":\"a\",\"timeout\":\"24h0m0s\"}\n", out)
	out, _ = printed(t, formatJSONL, view{value: map[string]string{"run": "r"}})
	assert.Equal(t, "{\"run\":\"r\"}\n", out)
}

func TestPrinterRawJSONIsOneValue(t *testing.T) {
	raw := []byte(`{"a": [1, 2]}`)
	out, _ := printed(t, formatJSONL, view{value: json.RawMessage(raw)})
	assert.Equal(t, "{\"a\":[1,2]}\n", out)
	out, _ = printed(t, formatJSON, view{value: json.RawMessage(raw)})
	assert.Equal(t, "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n", out)
}

func TestPrinterReturnsTheViewErrorAfterPrinting(t *testing.T) {
	failed := &exitError{code: ExitRunFailed, err: fmt.Errorf("run r ended failed")}
	for _, f := range formats {
		out, err := printed(t, f, view{value: map[string]string{"run": "r"}, text: func(w io.Writer) error {
			_, err := fmt.Fprintln(w, "Run r")
			return err
		}, err: failed})
		assert.NotEmpty(t, out, f)
		assert.Equal(t, failed, err, f)
	}
	out, err := printed(t, formatTable, view{value: 1})
	assert.NoError(t, err)
	assert.Empty(t, out, "no text: nothing printed")
	for _, f := range formats {
		out, err := printed(t, f, view{})
		assert.NoError(t, err)
		assert.Empty(t, out, "an empty view prints nothing")
	}
}

func TestPrinterEventsAndNotes(t *testing.T) {
	ev := struct {
		Event string        `json:"event"`
		Took  time.Duration `json:"took"`
	}{"ended", time.Second}
	for f, want := range map[string]string{
		formatTable: "note\nended after 1s\n",
		formatJSON:  "{\"event\":\"ended\",\"took\":\"1s\"}\n",
		formatJSONL: "{\"event\":\"ended\",\"took\":\"1s\"}\n",
	} {
		var out bytes.Buffer
		p := printer{format: f, out: &out}
		p.note("%s\n", "note")
		p.event(ev, func(w io.Writer) { fmt.Fprintln(w, "ended after 1s") })
		assert.Equal(t, want, out.String(), f)
	}
}

func TestCheckFormat(t *testing.T) {
	for _, f := range formats {
		assert.NoError(t, checkFormat(f))
	}
	err := checkFormat("yaml")
	require.Error(t, err)
	assert.Equal(t, `--output "yaml": want table, json or jsonl`, err.Error())
	assert.Equal(t, ExitUsage, classify(err))
}

// TestValidateJSONL: -o jsonl prints one compact object a file, the same results as -o
// json, with the exit code of an invalid file.
func TestValidateJSONL(t *testing.T) {
	t.Chdir("../../flowdef")
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	require.NotEmpty(t, files)
	args := append(append([]string{"validate", "-o", "json"}, testdataRegistry...), files...)
	code, stdout, _ := run(t, "", args...)
	require.Equal(t, ExitUsage, code)
	var want []fileResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &want))

	args[2] = "jsonl"
	code, stdout, stderr := run(t, "", args...)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "errors in")
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, len(files), stdout)
	for i, l := range lines {
		var got fileResult
		require.NoError(t, json.Unmarshal([]byte(l), &got), l)
		assert.Equal(t, want[i], got)
		assert.NotContains(t, l, "\n  ", "compact")
	}
}
