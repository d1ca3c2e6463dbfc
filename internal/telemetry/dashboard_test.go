package telemetry

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

var metricName = regexp.MustCompile(`\b(?:gateflow|temporal)_[a-z0-9_]+\b`)

// The Grafana dashboard is valid JSON, and every query in it names metrics gateflow
// serves (Exported, SDKExported), among them the histograms and the active runs.
func TestDashboardNamesOnlyExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/gateflow-dashboard.json")
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(b, &d))
	assert.NotEmpty(t, d.Title)
	assert.NotEmpty(t, d.UID)
	require.NotEmpty(t, d.Panels)

	used := map[string]bool{}
	check := func(where, expr string) {
		names := metricName.FindAllString(expr, -1)
		assert.NotEmpty(t, names, "%s: %q names no gateflow or temporal metric", where, expr)
		for _, n := range names {
			used[n] = true
			assert.True(t, IsExported(n), "%s: %s is not a metric gateflow serves (telemetry.Exported, SDKExported)", where, n)
		}
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		assert.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			check("panel "+p.Title+" "+tg.RefID, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			check("variable "+v.Name, q["query"].(string))
		}
	}
	for _, want := range []string{"gateflow_runs_started_total", "gateflow_runs_total", "gateflow_active_runs",
		"gateflow_step_duration_seconds_bucket", "gateflow_run_duration_seconds_bucket", "gateflow_approval_wait_seconds_bucket"} {
		assert.True(t, used[want], "the dashboard shows %s", want)
	}
	sdk := 0
	for n := range used {
		if strings.HasPrefix(n, "temporal_") {
			sdk++
		}
	}
	assert.Positive(t, sdk, "the dashboard shows the SDK's metrics")
}
