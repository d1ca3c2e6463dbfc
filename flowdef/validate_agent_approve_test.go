package flowdef

import "testing"

// TestValidateAgentApprovals: approve names tools of the step (not on think), gates'
// fields are checked like approval gates', and input tools take their own keys, each
// refusal at its line:col.
func TestValidateAgentApprovals(t *testing.T) {
	const head = "name: x\nsteps:\n  - id: a\n    uses: agent\n    with:\n      prompt: p\n"
	reg := &StaticRegistry{Actions: []string{"lookup", "restart"}}
	const tools = "      tools:\n        - {action: lookup}\n        - {name: restart_db, action: restart}\n"
	for _, tt := range []struct {
		name, with string
		want       []string // substrings; empty means valid
	}{
		{"step approve", tools + "      approve: [restart_db]\n      approvers: [alice, 'group:oncall']\n      required: 1\n      approval_timeout: 1h\n      on_approval_timeout: reject\n", nil},
		{"tool approve true", "      tools:\n        - {name: r, action: restart, approve: true}\n", nil},
		{"tool approve mapping", "      tools:\n        - name: r\n          action: restart\n          approve: {approvers: [bob], required: 1, timeout: 30m, on_timeout: fail, message: restart?}\n", nil},
		{"input tool", "      tools:\n        - input: {prompt: 'The agent asks:', approvers: [alice], timeout: 1h, schema: {type: string}}\n      approve: [lookup]\n", []string{"no tool 'lookup' in this step (hint: one of the step's tools: ask_human)"}},
		{"named input tool", "      tools:\n        - {name: ask, description: asks the on-call, input: {prompt: q}}\n", nil},
		{"approve unknown tool", tools + "      approve: [restart_db, drop_db]\n",
			[]string{"f.yaml:10:29: step 'a': with.approve[1]: no tool 'drop_db' in this step (hint: one of the step's tools: lookup, restart_db)"}},
		{"approve on think", "      think: true\n      approve: [x]\n",
			[]string{"f.yaml:8:17: step 'a': with.approve[0]: think takes no tools, so no tool 'x' to approve"}},
		{"approve not a list", tools + "      approve: restart_db\n", []string{"f.yaml:10:16: step 'a': with.approve: want a list, got a string"}},
		{"bad approver", tools + "      approvers: ['Group:x']\n", []string{"f.yaml:10:19: step 'a': with.approvers[0]: approver \"Group:x\": write the group prefix in lower case"}},
		{"bad on_approval_timeout", tools + "      on_approval_timeout: later\n",
			[]string{"f.yaml:10:28: step 'a': with.on_approval_timeout: unknown value 'later' (hint: one of: reject, approve, fail)"}},
		{"bad approval_timeout", tools + "      approval_timeout: soon\n", []string{"f.yaml:10:25: step 'a': with.approval_timeout:"}},
		{"tool approve unknown key", "      tools:\n        - {name: r, action: restart, approve: {approver: [bob]}}\n",
			[]string{"f.yaml:8:58: step 'a': unknown field 'approver' in with.tools[0].approve (hint: did you mean 'approvers'?)"}},
		{"tool approve not a bool", "      tools:\n        - {name: r, action: restart, approve: yes please}\n",
			[]string{"f.yaml:8:47: step 'a': with.tools[0].approve: want true, false or a mapping, got a string"}},
		{"tool approve bad on_timeout", "      tools:\n        - {name: r, action: restart, approve: {on_timeout: never}}\n",
			[]string{"with.tools[0].approve.on_timeout: unknown value 'never'"}},
		{"input tool unknown key", "      tools:\n        - {input: {prompt: q, assignees: [a]}}\n",
			[]string{"f.yaml:8:42: step 'a': unknown field 'assignees' in with.tools[0].input (hint: known fields: prompt, approvers, timeout, schema)"}},
		{"input tool bad schema", "      tools:\n        - {input: {prompt: q, schema: {type: strin}}}\n", []string{"with.tools[0].input.schema: invalid JSON Schema"}},
		{"input tool approve", "      tools:\n        - {input: {prompt: q}, approve: true}\n", []string{"with.tools[0].approve: approve is not for input tools"}},
		{"input tool and action", "      tools:\n        - {action: lookup, input: {prompt: q}}\n", []string{"a tool needs exactly one of action, shell, http, input"}},
		{"two input tools", "      tools:\n        - {input: {prompt: q}}\n        - {input: {prompt: r}}\n", []string{"with.tools[1].name: tool 'ask_human' is already with.tools[0]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, validate(t, reg, head+tt.with), tt.want)
		})
	}
}
