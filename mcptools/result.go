package mcptools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result is what a tool call returned, bounded by Options.MaxResultBytes.
type Result struct {
	// Text is the call's content as text: text parts as they are, one per line, and a
	// one-line placeholder for each image, audio, link or embedded resource.
	Text string `json:"text"`
	// Structured is the structured content, when the tool returned some that fits the
	// limit (canonical JSON). Text and Structured are bounded separately.
	Structured json.RawMessage `json:"structured,omitempty"`
	// IsError says the tool ran and failed: Text says why. It is a value for the caller
	// (the model) to see, not a Go error.
	IsError bool `json:"is_error,omitempty"`
	// Truncated says Text was cut or Structured dropped to stay within the limit; Text
	// then ends with a marker saying so.
	Truncated bool `json:"truncated,omitempty"`
}

// ResourceContent is what reading a resource returned, bounded like a Result.
type ResourceContent struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mime_type,omitempty"`
	// Text is the text of the resource's parts, one per line, with a placeholder for
	// each binary part.
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
}

// boundedText collects text up to a limit and records what it left out.
type boundedText struct {
	limit   int
	b       strings.Builder
	dropped int
}

// add appends a part (on a new line after the first part).
func (t *boundedText) add(s string) {
	if t.b.Len() > 0 {
		s = "\n" + s
	}
	room := t.limit - t.b.Len()
	if len(s) <= room {
		t.b.WriteString(s)
		return
	}
	cut := max(room, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	t.b.WriteString(s[:cut])
	t.dropped += len(s) - cut
}

// finish returns the text, with a marker when something was left out.
func (t *boundedText) finish() (string, bool) {
	if t.dropped == 0 {
		return t.b.String(), false
	}
	return t.b.String() + fmt.Sprintf("\n…[cut: %d more bytes over the %d-byte limit]", t.dropped, t.limit), true
}

// resultFromMCP converts and bounds a tool result: its text and its structured content
// are each bounded by limit.
func resultFromMCP(r *mcp.CallToolResult, limit int) (*Result, error) {
	t := boundedText{limit: limit}
	for _, c := range r.Content {
		t.add(contentText(c))
	}
	out := &Result{IsError: r.IsError}
	out.Text, out.Truncated = t.finish()
	structured, err := canonicalJSON(r.StructuredContent)
	if err != nil {
		return nil, fmt.Errorf("structured content: %w", err)
	}
	if len(structured) > limit {
		out.Text += fmt.Sprintf("\n…[structured content of %d bytes left out: over the %d-byte limit]", len(structured), limit)
		out.Truncated = true
		structured = nil
	}
	out.Structured = structured
	return out, nil
}

// contentText renders one content part as text.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data))
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource link %s]", c.URI)
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return "[embedded resource]"
		}
		return resourceText(c.Resource)
	default:
		return fmt.Sprintf("[%T content]", c)
	}
}

func resourceText(c *mcp.ResourceContents) string {
	if c.Blob != nil {
		return fmt.Sprintf("[resource %s: %s, %d bytes]", c.URI, c.MIMEType, len(c.Blob))
	}
	return c.Text
}

// resourceFromMCP converts and bounds a resource read.
func resourceFromMCP(uri string, r *mcp.ReadResourceResult, limit int) *ResourceContent {
	out := &ResourceContent{URI: uri}
	t := boundedText{limit: limit}
	for _, c := range r.Contents {
		if c == nil {
			continue
		}
		if out.MIMEType == "" {
			out.MIMEType = c.MIMEType
		}
		t.add(resourceText(c))
	}
	out.Text, out.Truncated = t.finish()
	return out
}
