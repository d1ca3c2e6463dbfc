package mcptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func mustTool(t *testing.T, name string, schema any) Tool {
	t.Helper()
	tool, err := toolFromMCP(&mcp.Tool{Name: name, InputSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestCatalogDeterministic(t *testing.T) {
	// The same tools listed in another order, with schema keys in another order, give
	// the same bytes.
	build := func(order []string, schemas map[string]any) []byte {
		var c Catalog
		for _, server := range order {
			var tools []Tool
			for _, name := range order {
				tools = append(tools, mustTool(t, name, schemas[name]))
			}
			if err := c.Add(server, tools); err != nil {
				t.Fatal(err)
			}
		}
		data, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	a := build([]string{"b", "a", "c"}, map[string]any{
		"a": json.RawMessage(`{"type":"object","properties":{"z":{"type":"number","maximum":1.50},"y":{"type":"string"}}}`),
		"b": map[string]any{"type": "object", "required": []string{"q"}},
	})
	b := build([]string{"c", "b", "a"}, map[string]any{
		"a": json.RawMessage(`{"properties":{"y":{"type":"string"},"z":{"maximum":1.50,"type":"number"}},"type":"object"}`),
		"b": json.RawMessage(`{"required":["q"],"type":"object"}`),
	})
	if !bytes.Equal(a, b) {
		t.Fatalf("catalogs differ:\n%s\n%s", a, b)
	}
	if !strings.HasPrefix(string(a), `{"servers":[{"server":"a","tools":[{"name":"a","input_schema":{"properties":{"y"`) ||
		!strings.Contains(string(a), `"maximum":1.50`) || !strings.Contains(string(a), `"name":"c","input_schema":{"type":"object"}`) {
		t.Errorf("catalog JSON: %s", a)
	}
	var back Catalog
	if err := json.Unmarshal(a, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(&back)
	if !bytes.Equal(a, again) {
		t.Errorf("round trip changed the catalog:\n%s\n%s", a, again)
	}
	if err := back.Add("a", []Tool{{Name: "x"}, {Name: "x"}}); err == nil {
		t.Error("a tool listed twice: no error")
	}
}

func TestValidateCall(t *testing.T) {
	var c Catalog
	schema := json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":5}},"required":["service"],"additionalProperties":false}`)
	if err := c.Add("triage", []Tool{mustTool(t, "recent_deploys", schema)}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args    string
		wantErr string
	}{
		{`{"service":"checkout","limit":2}`, ""},
		{`{"service":"checkout"}`, ""},
		{``, "required"},
		{`{"service":"checkout","limit":9}`, "maximum"},
		{`{"service":"checkout","extra":1}`, "extra"},
		{`{"service":3}`, "type"},
		{`{"service":`, "not JSON"},
	} {
		err := c.ValidateCall("triage", "recent_deploys", json.RawMessage(tt.args))
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("ValidateCall(%s) = %v, want %q", tt.args, err, tt.wantErr)
		}
	}
	if err := c.ValidateCall("triage", "nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
	if err := c.ValidateCall("other", "recent_deploys", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown server: %v", err)
	}
}

func TestMsgLimit(t *testing.T) {
	for _, tt := range []struct {
		name    string
		framing framing
		in      string
		tooBig  bool
	}{
		{"lines under", framingLines, "1234567890\n1234567890\n", false},
		{"line over", framingLines, "123\n123456789012\n", true},
		{"events under", framingEvents, "data: 1\n\ndata: 2\r\n\r\ndata: 3\n\n", false},
		{"event over, lines short", framingEvents, "data: 1\ndata: 2\n\n", true},
		{"body over despite newlines", framingBody, "1234\n1234\n1\n", true},
		{"body under", framingBody, "1234\n1234\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var tripped atomic.Bool
			r := &msgLimit{r: iotest.OneByteReader(strings.NewReader(tt.in)), framing: tt.framing, limit: 11, tripped: &tripped}
			_, err := io.ReadAll(r)
			if got := errors.Is(err, ErrTooLarge); got != tt.tooBig || tripped.Load() != tt.tooBig {
				t.Errorf("err %v, tripped %v, want too big %v", err, tripped.Load(), tt.tooBig)
			}
		})
	}
}

func TestBoundedTextCutsOnRuneBoundary(t *testing.T) {
	b := boundedText{limit: 10}
	b.add("ab")
	b.add("€€€€") // 12 bytes after the newline
	text, cut := b.finish()
	body, marker, _ := strings.Cut(text, "\n…[cut: ")
	if !cut || !utf8.ValidString(text) || len(body) > 10 || body != "ab\n€€" || marker != "6 more bytes over the 10-byte limit]" {
		t.Errorf("finish = %q, %v", text, cut)
	}
}
