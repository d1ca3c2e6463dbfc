package main

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPFlag(t *testing.T) {
	cfg, err := parse([]string{
		"--mcp", `triage=triage-tools --count-file "/tmp/my calls"`,
		"--mcp", "docs=https://mcp.example.com/mcp",
	}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, mcpFlags{
		{Name: "triage", Command: []string{"triage-tools", "--count-file", "/tmp/my calls"}},
		{Name: "docs", URL: "https://mcp.example.com/mcp"},
	}, cfg.mcp)
	assert.Equal(t, "triage,docs", cfg.mcp.String())

	cfg, err = parse(nil, io.Discard)
	require.NoError(t, err)
	assert.Empty(t, cfg.mcp)
}

func TestMCPFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no name", []string{"--mcp", "triage-tools"}, `invalid value "triage-tools" for flag -mcp`},
		{"no command", []string{"--mcp", "triage="}, `invalid value "triage=" for flag -mcp`},
		{"URL with arguments", []string{"--mcp", "docs=https://x.example/mcp extra"}, "a URL server takes no arguments"},
		{"twice", []string{"--mcp", "t=a", "--mcp", "t=b"}, `invalid value "t=b" for flag -mcp: mcp server "t" is declared twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(tt.args, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	var stderr bytes.Buffer
	assert.Equal(t, 2, run([]string{"--mcp", "nothing"}, io.Discard, &stderr), "a bad flag's exit code")
	assert.Contains(t, stderr.String(), `flow-worker: invalid value "nothing" for flag -mcp`)
}

func TestMCPFlagHelp(t *testing.T) {
	var stderr bytes.Buffer
	assert.Equal(t, 0, run([]string{"--help"}, io.Discard, &stderr))
	assert.Contains(t, stderr.String(), "-mcp name=command arg…")
	assert.Contains(t, stderr.String(), "name=https://host/path talks streamable HTTP")
}
