package mcptools

import (
	"slices"
	"strings"
	"testing"
)

func TestParseServerFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    Server
		wantErr string
	}{
		{in: "triage=triage-tools", want: Server{Name: "triage", Command: []string{"triage-tools"}}},
		{in: "triage=./bin/triage-tools --count-file /tmp/c", want: Server{Name: "triage", Command: []string{"./bin/triage-tools", "--count-file", "/tmp/c"}}},
		{in: ` fs = npx  -y "@scope/server fs" '/a b' c\ d `, want: Server{Name: "fs", Command: []string{"npx", "-y", "@scope/server fs", "/a b", "c d"}}},
		{in: `q=cmd "" x`, want: Server{Name: "q", Command: []string{"cmd", "", "x"}}},
		{in: "docs=https://mcp.example.com/mcp", want: Server{Name: "docs", URL: "https://mcp.example.com/mcp"}},
		{in: "local_1=http://127.0.0.1:8080/mcp?x=1", want: Server{Name: "local_1", URL: "http://127.0.0.1:8080/mcp?x=1"}},
		{in: "HTTP-up=HTTPS://h/mcp", wantErr: "lower-case"},
		{in: "noequals", wantErr: "want name=command"},
		{in: "=cmd", wantErr: "empty name"},
		{in: "1abc=cmd", wantErr: "starting with a letter"},
		{in: "a.b=cmd", wantErr: "lower-case letters"},
		{in: strings.Repeat("a", 65) + "=cmd", wantErr: "longer than 64"},
		{in: "x=", wantErr: "no command"},
		{in: "x=   ", wantErr: "no command"},
		{in: `x=cmd "open`, wantErr: "unterminated \" quote"},
		{in: `x=cmd 'open`, wantErr: "unterminated ' quote"},
		{in: `x=cmd \`, wantErr: "trailing backslash"},
		{in: "x=https://", wantErr: "no host"},
		{in: "x=https://user:pw@h/mcp", wantErr: "credentials"},
		{in: "x=https://h/mcp#frag", wantErr: "fragment"},
		{in: "x=https://h/mcp extra", wantErr: "takes no arguments"},
		{in: "x=https://h/%zz", wantErr: "bad URL"},
	}
	for _, tt := range tests {
		got, err := ParseServerFlag(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseServerFlag(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseServerFlag(%q): %v", tt.in, err)
			continue
		}
		if got.Name != tt.want.Name || got.URL != tt.want.URL || !slices.Equal(got.Command, tt.want.Command) {
			t.Errorf("ParseServerFlag(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestServerValidate(t *testing.T) {
	tests := []struct {
		s       Server
		wantErr string
	}{
		{Server{Name: "a", Command: []string{"x"}, Env: []string{"K=V"}, Dir: "/tmp"}, ""},
		{Server{Name: "a", URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer t"}}, ""},
		{Server{Name: "a"}, "no command and no URL"},
		{Server{Name: "a", Command: []string{"x"}, URL: "https://h"}, "not both"},
		{Server{Name: "a", Command: []string{" "}}, "empty command"},
		{Server{Name: "a", Command: []string{"x"}, Env: []string{"NOEQ"}}, "KEY=VALUE"},
		{Server{Name: "a", Command: []string{"x"}, Headers: map[string]string{"A": "b"}}, "headers are for URL servers"},
		{Server{Name: "a", URL: "https://h", Dir: "/tmp"}, "env and dir are for command servers"},
		{Server{Name: "a", URL: "ftp://h"}, "scheme must be http or https"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%+v.Validate() = %v, want %q", tt.s, err, tt.wantErr)
		}
	}
}

// FuzzParseServerFlag: any input either fails with an error or yields a server that
// validates, whose command has no empty program name, and that parses the same again
// from its own rendering.
func FuzzParseServerFlag(f *testing.F) {
	for _, seed := range []string{
		"triage=triage-tools --count-file /tmp/c",
		`fs=npx -y "@scope/server fs" '/a b' c\ d`,
		"docs=https://mcp.example.com/mcp",
		"x=http://127.0.0.1:1/mcp?q=1",
		`x=cmd "open`, "=", "a=", "a=https://", "a=\\",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseServerFlag(in)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseServerFlag(%q) = %+v, which does not validate: %v", in, s, err)
		}
		if s.URL != "" {
			return
		}
		quoted := make([]string, len(s.Command))
		for i, a := range s.Command {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		again, err := ParseServerFlag(s.Name + "=" + strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-parsing %+v: %v", s, err)
		}
		if !slices.Equal(again.Command, s.Command) {
			t.Fatalf("re-parsing %+v gave %+v", s, again)
		}
	})
}
