package mcptools

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// Server declares one MCP server: a name plus either a command the pool starts and talks
// to over stdio, or the URL of a streamable-HTTP endpoint. Exactly one of Command and URL
// is set.
type Server struct {
	// Name is how tools are addressed ("server.tool" in a grant): lower-case letters,
	// digits, '-' and '_', starting with a letter, at most 64 bytes.
	Name string `json:"name"`

	// Command is the argv of a stdio server: Command[0] is looked up in PATH. The process
	// inherits the worker's environment plus Env and runs in Dir (the worker's directory
	// when empty).
	Command []string `json:"command,omitempty"`
	Env     []string `json:"env,omitempty"`
	Dir     string   `json:"dir,omitempty"`

	// URL is the endpoint of a streamable-HTTP server (http or https); Headers are sent
	// with every request (an Authorization header, say).
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// maxNameLen bounds a server name.
const maxNameLen = 64

// Validate reports what is wrong with the declaration, if anything.
func (s Server) Validate() error {
	if err := validateName(s.Name); err != nil {
		return err
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return fmt.Errorf("mcp server %q: set either a command or a URL, not both", s.Name)
	case len(s.Command) > 0:
		if strings.TrimSpace(s.Command[0]) == "" {
			return fmt.Errorf("mcp server %q: empty command", s.Name)
		}
		if len(s.Headers) > 0 {
			return fmt.Errorf("mcp server %q: headers are for URL servers only", s.Name)
		}
		for _, kv := range s.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				return fmt.Errorf("mcp server %q: env entry %q is not KEY=VALUE", s.Name, kv)
			}
		}
		return nil
	case s.URL != "":
		if len(s.Env) > 0 || s.Dir != "" {
			return fmt.Errorf("mcp server %q: env and dir are for command servers only", s.Name)
		}
		return validateURL(s.Name, s.URL)
	default:
		return fmt.Errorf("mcp server %q: no command and no URL", s.Name)
	}
}

func validateName(name string) error {
	if name == "" {
		return errors.New("mcp server: empty name")
	}
	if len(name) > maxNameLen {
		return fmt.Errorf("mcp server name %.20q…: longer than %d bytes", name, maxNameLen)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '_')
		if !ok {
			return fmt.Errorf("mcp server name %q: use lower-case letters, digits, '-' and '_', starting with a letter", name)
		}
	}
	return nil
}

func validateURL(name, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("mcp server %q: bad URL: %w", name, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("mcp server %q: URL %q: scheme must be http or https", name, raw)
	}
	if u.Host == "" {
		return fmt.Errorf("mcp server %q: URL %q has no host", name, raw)
	}
	if u.User != nil {
		return fmt.Errorf("mcp server %q: URL must not hold credentials (send them as a header)", name)
	}
	if u.Fragment != "" {
		return fmt.Errorf("mcp server %q: URL %q must not have a fragment", name, raw)
	}
	return nil
}

// ParseServerFlag parses the value of a `--mcp` flag: "name=https://host/path" declares a
// streamable-HTTP server, "name=command arg…" a stdio server. Arguments are separated by
// blanks; single or double quotes keep blanks inside one argument and a backslash escapes
// the next character outside single quotes.
func ParseServerFlag(value string) (Server, error) {
	name, rest, ok := strings.Cut(value, "=")
	if !ok {
		return Server{}, fmt.Errorf("--mcp %q: want name=command… or name=https://…", value)
	}
	s := Server{Name: strings.TrimSpace(name)}
	if err := validateName(s.Name); err != nil {
		return Server{}, fmt.Errorf("--mcp %q: %w", value, err)
	}
	rest = strings.TrimSpace(rest)
	if lower := strings.ToLower(rest); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		if strings.ContainsFunc(rest, unicode.IsSpace) {
			return Server{}, fmt.Errorf("--mcp %q: a URL server takes no arguments", value)
		}
		s.URL = rest
	} else {
		argv, err := splitArgs(rest)
		if err != nil {
			return Server{}, fmt.Errorf("--mcp %q: %w", value, err)
		}
		s.Command = argv
	}
	if err := s.Validate(); err != nil {
		return Server{}, fmt.Errorf("--mcp %q: %w", value, err)
	}
	return s, nil
}

// splitArgs splits a command line on blanks, honouring quotes and backslashes.
func splitArgs(line string) ([]string, error) {
	var (
		args    []string
		cur     strings.Builder
		inArg   bool
		quote   rune
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'' && r == '\'', quote == '"' && r == '"':
			quote = 0
		case quote == '\'':
			cur.WriteRune(r)
		case r == '\\':
			escaped, inArg = true, true
		case quote == '"':
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case unicode.IsSpace(r):
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	switch {
	case quote != 0:
		return nil, fmt.Errorf("unterminated %c quote", quote)
	case escaped:
		return nil, errors.New("trailing backslash")
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("no command")
	}
	return args, nil
}
