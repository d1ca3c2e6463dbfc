// Package mcptools talks to MCP (Model Context Protocol) servers for agent steps: it
// lists their tools, calls them and reads their resources, through the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). It knows nothing of workflows.
package mcptools
