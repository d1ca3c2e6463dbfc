package flowdef

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestValidateApprovalGates: the quorum, the deadline's action and the approvers of an
// approval gate are checked as approval.Request checks them; a field of another gate
// type is an error, never ignored.
func TestValidateApprovalGates(t *testing.T) {
	const head = "name: x\ninputs: {type: object, properties: {owner: {type: string}}}\nsteps:\n"
	for _, tt := range []struct {
		name, node string
		want       []string // substrings; empty means valid
	}{
		{"quorum", "{id: g, gate: {type: approval, approvers: [alice, bob], required: 2}}", nil},
		{"quorum of anyone", "{id: g, gate: {type: approval, required: 3}}", nil},
		{"quorum with a group", "{id: g, gate: {type: approval, approvers: [alice, 'group:ops'], required: 5}}", nil},
		{"quorum with a template", "{id: g, gate: {type: approval, approvers: ['${{ inputs.owner }}'], required: 2}}", nil},
		{"params is not a field of approval gates (issue 31)", "{id: g, gate: {type: approval, params: {required: 2}}}",
			[]string{"f.yaml:4:44: gate 'g': field 'params' is not valid on an approval gate (hint: approval gates take prompt, approvers, required, on_timeout; params belongs to poll gates)"}},
		{"required zero", "{id: g, gate: {type: approval, required: 0}}", []string{"gate 'g': required must be at least 1 (got 0)"}},
		{"required negative", "{id: g, gate: {type: approval, required: -2}}", []string{"required must be at least 1 (got -2)"}},
		{"more required than listed", "{id: g, gate: {type: approval, approvers: [alice, bob, alice], required: 3}}",
			[]string{"gate 'g': required is 3 but only 2 distinct approvers are listed (alice, bob)"}},
		{"required on an input gate", "{id: g, gate: {type: input, schema: {type: object}, required: 2}}",
			[]string{"field 'required' is not valid on an input gate (hint: input gates take prompt, approvers, schema; required belongs to approval gates)"}},
		{"schema on an approval gate", "{id: g, gate: {type: approval, schema: {type: object}}}", []string{"field 'schema' is not valid on an approval gate"}},
		{"approvers on a poll gate", "{id: g, gate: {type: poll, resolver: command, approvers: [alice]}}",
			[]string{"field 'approvers' is not valid on a poll gate (hint: poll gates take resolver, params, poll_interval, allow_manual; approvers belongs to approval, input gates)"}},
		{"on_timeout approve", "{id: g, gate: {type: approval, on_timeout: approve}, timeout: 1h}", nil},
		{"on_timeout fail", "{id: g, gate: {type: approval, on_timeout: fail}, timeout: 1h}", nil},
		{"on_timeout reject routed by the node", "{id: g, gate: {type: approval, on_timeout: reject}, timeout: 1h, on_timeout: continue}", nil},
		{"on_timeout unknown", "{id: g, gate: {type: approval, on_timeout: ignore}, timeout: 1h}",
			[]string{"gate 'g': gate on_timeout: unknown value 'ignore' (hint: one of: reject, approve, fail)"}},
		{"on_timeout without timeout", "{id: g, gate: {type: approval, on_timeout: approve}}",
			[]string{"gate 'g': gate on_timeout without timeout (hint: add timeout: to the node (the gate's deadline))"}},
		{"node on_timeout that never applies", "{id: g, gate: {type: approval, on_timeout: fail}, timeout: 1h, on_timeout: continue}",
			[]string{"gate 'g': on_timeout never applies: the gate's on_timeout is fail"}},
		{"approver with a space", "{id: g, gate: {type: approval, approvers: ['alice smith']}}", []string{"gate 'g': approvers[0]:", "space"}},
		{"approver group without a name", "{id: g, gate: {type: approval, approvers: [alice, 'group:']}}", []string{"gate 'g': approvers[1]:"}},
		{"approver template of an undeclared input", "{id: g, gate: {type: approval, approvers: ['${{ inputs.nobody }}']}}", []string{"gate 'g': approvers[0]:", "nobody"}},
		{"approver template that does not compile", "{id: g, gate: {type: input, schema: {type: object}, approvers: ['${{ inputs.owner + }}']}}", []string{"gate 'g': approvers[0]:"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantErrors(t, validate(t, &StaticRegistry{}, head+"  - "+tt.node+"\n"), tt.want)
		})
	}
}

// gateSamples are a valid value of every gate field, and the fields each type needs.
var (
	gateSamples = map[string]string{
		"prompt": "'Ship?'", "approvers": "[alice]", "required": "1", "on_timeout": "reject",
		"schema": "{type: object}", "signal": "go", "key": "k", "resolver": "command",
		"params": "{command: 'true'}", "poll_interval": "1s", "allow_manual": "true",
		"source": "s", "threshold": "50", "on_fail": "continue",
	}
	gateNeeds = map[string][]string{GateInput: {"schema"}, GateSignal: {"signal"}, GatePoll: {"resolver"}, GateQuality: {"source"}}
)

// TestGateFieldsPerType: for every gate type and every gate field, a gate written with
// that field is accepted by Validate and by the published JSON Schema exactly when the
// type takes it (gateFields); otherwise Validate names the field and the type.
func TestGateFieldsPerType(t *testing.T) {
	fields := make([]string, 0, len(gateSamples))
	for f := range gateSamples {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for typ, allowed := range gateFields {
		for _, field := range fields {
			gate := map[string]string{"type": typ}
			for _, need := range gateNeeds[typ] {
				gate[need] = gateSamples[need]
			}
			gate[field] = gateSamples[field]
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(gate)) {
				parts = append(parts, k+": "+gate[k])
			}
			src := "name: x\nsteps:\n  - {id: s, uses: agent}\n  - {id: g, timeout: 1h, gate: {" + strings.Join(parts, ", ") + "}}\n"
			def, err := Check("f.yaml", []byte(src), &StaticRegistry{})
			if def == nil {
				t.Fatalf("%s: parse: %v", src, err)
			}
			ok := slices.Contains(allowed, field)
			msg := fmt.Sprintf("field '%s' is not valid on %s %s gate", field, article(typ), typ)
			switch {
			case ok && err != nil:
				t.Errorf("%s gate with %s: want valid, got %v", typ, field, err)
			case !ok && (err == nil || !strings.Contains(err.Error(), msg)):
				t.Errorf("%s gate with %s: want %q, got %v", typ, field, msg, err)
			}
			if ferr := CheckFormat(def); (ferr == nil) != ok {
				t.Errorf("%s gate with %s: schema.json says %v, Validate says valid=%v", typ, field, ferr, ok)
			}
		}
	}
}
