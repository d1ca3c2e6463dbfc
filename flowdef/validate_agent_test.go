package flowdef

import (
	"strings"
	"testing"
)

// TestValidateAgentWith: an agent step's `with:` takes the loop's settings and tools, and
// refuses what the interpreter would not run, each at its line:col.
func TestValidateAgentWith(t *testing.T) {
	const head = "name: x\nsteps:\n  - {id: inv, uses: shell, with: {command: 'true'}}\n  - id: a\n    uses: agent\n    with:\n      prompt: p\n"
	reg := &StaticRegistry{Actions: []string{"lookup", "uptime"}}
	for _, tt := range []struct {
		name, with string
		want       []string // substrings; empty means valid
	}{
		{"single call", "      model: m\n      max_tokens: 100\n      max_budget_usd: '0.50'\n", nil},
		{"loop", `      max_turns: 5
      max_loop_tokens: 20000
      on_limit: answer
      context: [the hosts are in rack 4]
      reads: ['${{ steps.inv.output }}']
      messages: [{role: user, text: hi}, {role: assistant, text: hello}]
      tools:
        - {action: lookup, description: looks a host up, parameters: {type: object, properties: {host: {type: string}}}}
        - {name: up, action: uptime, fatal: true}
        - name: disk
          shell: {command: 'df -h "$path"', timeout: 10s}
          params: [{name: path, description: the path, required: true}]
`, nil},
		{"think", "      think: true\n      context: one string\n", nil},
		{"loop time", "      max_loop_time: 10m\n      tools: [{action: lookup}]\n", nil},
		{"templated loop time", "      max_loop_time: '${{ \"1h\" }}'\n", nil},
		{"zero loop time", "      max_loop_time: 0s\n",
			[]string{"f.yaml:8:22: step 'a': with.max_loop_time: duration \"0s\" must be positive (hint: write a Go duration"}},
		{"negative loop time", "      max_loop_time: -5m\n", []string{"f.yaml:8:22: step 'a': with.max_loop_time: duration \"-5m\" must be positive"}},
		{"bad loop time", "      max_loop_time: soon\n", []string{"f.yaml:8:22: step 'a': with.max_loop_time: bad duration \"soon\""}},
		{"numeric loop time", "      max_loop_time: 600\n", []string{"f.yaml:8:22: step 'a': with.max_loop_time: want a duration string, got a number"}},
		{"templated limits", "      max_turns: '${{ 2 + 3 }}'\n      think: '${{ true }}'\n", nil},
		{"unknown key", "      max_turn: 5\n", []string{"f.yaml:8:17: step 'a': unknown field 'max_turn' in with (hint: did you mean 'max_turns'?)"}},
		{"unknown tool key", "      tools: [{action: lookup, descripton: d}]\n",
			[]string{"f.yaml:8:44: step 'a': unknown field 'descripton' in with.tools[0] (hint: did you mean 'description'?)"}},
		{"tools on think", "      think: true\n      tools: [{action: lookup}]\n",
			[]string{"f.yaml:9:14: step 'a': with.tools: think takes no tools"}},
		{"duplicate tool", "      tools: [{action: lookup}, {name: lookup, action: uptime}]\n",
			[]string{"f.yaml:8:40: step 'a': with.tools[1].name: tool 'lookup' is already with.tools[0]"}},
		{"unknown action", "      tools:\n        - action: lookpu\n",
			[]string{"f.yaml:9:19: step 'a': with.tools[0].action: no registered action 'lookpu'"}},
		{"builtin as action", "      tools: [{action: shell}]\n", []string{"with.tools[0].action: 'shell' is not a registered action"}},
		{"neither action nor shell", "      tools: [{name: x}]\n", []string{"with.tools[0]: a tool needs exactly one of action, shell, http"}},
		{"both action and shell", "      tools: [{name: x, action: lookup, shell: {command: ls}}]\n", []string{"a tool needs exactly one of action, shell, http"}},
		{"shell tool without name", "      tools: [{shell: {command: ls}}]\n", []string{"with.tools[0]: a shell tool needs a name"}},
		{"shell tool without command", "      tools: [{name: x, shell: {dir: /tmp}}]\n", []string{"with.tools[0].shell: a shell tool needs a command"}},
		{"shell tool unknown key", "      tools: [{name: x, shell: {command: ls, outputs: [a]}}]\n", []string{"unknown field 'outputs' in with.tools[0].shell"}},
		{"http tool", "      tools: [{name: w, http: {url: 'http://x/w', method: GET, expect_status: [200]}, params: [{name: q}]}]\n", nil},
		{"http tool without url", "      tools: [{name: w, http: {method: GET}}]\n", []string{"with.tools[0].http: an http tool needs a url"}},
		{"http tool with a body", "      tools: [{name: w, http: {url: 'http://x', body: b}}]\n", []string{"unknown field 'body' in with.tools[0].http"}},
		{"mcp tool without tool", "      tools: [{name: m, mcp: srv}]\n", []string{"f.yaml:8:15: step 'a': with.tools[0]: an mcp tool needs a tool name"}},
		{"bad param name", "      tools: [{name: x, shell: {command: ls}, params: [{name: 1a}]}]\n", []string{"with.tools[0].params[0].name: bad parameter name '1a'"}},
		{"params on an action", "      tools: [{action: lookup, params: []}]\n", []string{"with.tools[0].params: params is for shell and http tools"}},
		{"parameters not an object", "      tools: [{action: lookup, parameters: {type: string}}]\n", []string{"want an object schema, got type string"}},
		{"bad tool name", "      tools: [{name: 'a b', action: lookup}]\n", []string{"with.tools[0].name: bad tool name 'a b'"}},
		{"negative limit", "      max_turns: -1\n", []string{"f.yaml:8:18: step 'a': with.max_turns: must not be negative (got -1)"}},
		{"fractional limit", "      max_loop_tokens: 1.5\n", []string{"with.max_loop_tokens: want an integer, got 1.5"}},
		{"string limit", "      max_tokens: lots\n", []string{"with.max_tokens: want an integer, got a string"}},
		{"bad role", "      messages: [{role: system, text: t}]\n",
			[]string{"f.yaml:8:25: step 'a': with.messages[0].role: unknown role 'system' (hint: one of: user, assistant)"}},
		{"message without role", "      messages: [{text: t}]\n", []string{"with.messages[0]: a message needs a role"}},
		{"bad on_limit", "      on_limit: stop\n", []string{"f.yaml:8:17: step 'a': with.on_limit: unknown value 'stop' (hint: one of: answer, fail)"}},
		{"numeric budget", "      max_budget_usd: 1\n", []string{"with.max_budget_usd: want a string, got a number"}},
		{"think not a boolean", "      think: yes please\n", []string{"with.think: want a boolean, got a string"}},
		{"context of numbers", "      context: [1]\n", []string{"with.context[0]: want a string, got a number"}},
		{"read of an unknown step", "      reads: ['${{ steps.nope.output }}']\n", []string{"nope"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, validate(t, reg, head+tt.with), tt.want)
		})
	}
}

// wantErrors checks the errors of validate: none when want is empty, else each of want
// (substrings) among them.
func wantErrors(t *testing.T, got string, want []string) {
	t.Helper()
	if len(want) == 0 && got != "" {
		t.Fatalf("want valid, got:\n%s", got)
	}
	if len(want) > 0 && got == "" {
		t.Fatal("want errors, got none")
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("want %q in:\n%s", w, got)
		}
	}
}
