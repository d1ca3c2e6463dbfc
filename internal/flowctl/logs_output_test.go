package flowctl

import (
	"fmt"
	"testing"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/gateflow/gateflow/activities"
)

func TestDecodeOutput(t *testing.T) {
	dc := converter.GetDefaultDataConverter()
	payload := func(v any) *commonpb.Payload {
		p, err := dc.ToPayload(v)
		require.NoError(t, err)
		return p
	}
	for _, tt := range []struct {
		kind runs.StepKind
		v    any
		want string
	}{
		{runs.KindShell, activities.ShellResult{Stdout: "a\nb", Stderr: "w1\nw2\n"}, "a\nb\nstderr| w1\nstderr| w2\n"},
		{runs.KindShell, activities.ShellResult{Stdout: "a\n", Truncated: true}, fmt.Sprintf("a\n(output cut at %d bytes per stream)\n", activities.MaxOutputBytes)},
		{runs.KindHTTP, activities.HTTPResult{Status: 200, Body: `{"ok":true}`}, `{"ok":true}`},
		{runs.KindAgent, activities.AgentResult{Text: "LGTM"}, "LGTM"},
	} {
		p := payload(tt.v)
		got, err := decodeOutput(tt.kind, p)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
	p, err := dc.ToPayload("not a result")
	require.NoError(t, err)
	_, err = decodeOutput(runs.KindShell, p)
	assert.ErrorContains(t, err, "decode the shell result")
}
