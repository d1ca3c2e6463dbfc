package flow

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
)

// TestRenderRunsKey: the key a MaxRunsPerKey template gives for an input, and each input
// that cannot give one.
func TestRenderRunsKey(t *testing.T) {
	for _, tc := range []struct {
		name, tpl, input, want, wantErr string
	}{
		{name: "one field", tpl: "{repo}", input: `{"repo": "acme/web"}`, want: "acme/web"},
		{name: "literal and fields", tpl: "review-{org}-{n}", input: `{"org": "acme", "n": 12}`, want: "review-acme-12"},
		{name: "nested field", tpl: "{pr.repo}", input: `{"pr": {"repo": "web"}}`, want: "web"},
		{name: "big number kept exact", tpl: "{id}", input: `{"id": 12345678901234567890}`, want: "12345678901234567890"},
		{name: "bool", tpl: "{dry}", input: `{"dry": true}`, want: "true"},
		{name: "missing field", tpl: "{repo}", input: `{"org": "acme"}`, wantErr: "concurrency key {repo}: the input has no field repo"},
		{name: "null field", tpl: "{repo}", input: `{"repo": null}`, wantErr: "the input has no field repo"},
		{name: "no input", tpl: "{repo}", input: ``, wantErr: "the input has no field repo"},
		{name: "not an object", tpl: "{pr.repo}", input: `{"pr": "x"}`, wantErr: "the input has no field pr.repo"},
		{name: "object", tpl: "{pr}", input: `{"pr": {"a": 1}}`, wantErr: "input field pr is an object or a list"},
		{name: "empty", tpl: "{repo}", input: `{"repo": ""}`, wantErr: "concurrency key {repo} renders empty for this input"},
		{name: "too long", tpl: "{repo}", input: `{"repo": "` + strings.Repeat("x", 201) + `"}`, wantErr: "renders 201 bytes for this input: want at most 200"},
		{name: "not JSON", tpl: "{repo}", input: `{`, wantErr: "the input is not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := startplan.RenderRunsKey(tc.tpl, json.RawMessage(tc.input))
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestMaxRunsPerKeyOption: what Define accepts and records, and each refusal.
func TestMaxRunsPerKeyOption(t *testing.T) {
	h := func(*Context, struct{}) (string, error) { return "", nil }
	f := Define("keyed", h, MaxRunsPerKey("{repo}", 2, core.OverflowReplace))
	require.NoError(t, f.Err())
	assert.Equal(t, 2, f.Info().MaxRuns)
	assert.Equal(t, core.OverflowReplace, f.Info().OnOverflow)
	assert.Equal(t, "{repo}", f.Info().MaxRunsKey)
	f = Define("keyed", h, MaxRunsPerKey("{repo}", 2, ""), MaxRuns(1, core.OverflowRefuse))
	require.NoError(t, f.Err())
	assert.Empty(t, f.Info().MaxRunsKey, "the last of MaxRuns and MaxRunsPerKey wins")

	for _, tc := range []struct{ name, key, want string }{
		{"constant", "all", `max runs per key "all": no {field} reference to the input: a constant key is MaxRuns`},
		{"empty", "", `max runs per key "": no {field} reference`},
		{"stray brace", "{repo}}", `max runs per key "{repo}}": "}" is not a reference`},
		{"bad path", "{a..b}", `"{a..b}" is not a reference`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Define("keyed", h, MaxRunsPerKey(tc.key, 1, core.OverflowQueue))
			require.Error(t, f.Err())
			assert.Contains(t, f.Err().Error(), tc.want)
		})
	}
	f = Define("keyed", h, MaxRunsPerKey("{repo}", 0, core.OverflowQueue))
	require.Error(t, f.Err())
	assert.Contains(t, f.Err().Error(), "max runs 0: want at least 1")
}

// TestPlanStartKeyedMaxRuns: a start renders the key, hands its group to the run and
// refuses an input that gives no key; a plan acquires nothing.
func TestPlanStartKeyedMaxRuns(t *testing.T) {
	cat := &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{
		{Name: "keyed", MaxRuns: 1, OnOverflow: core.OverflowRefuse, MaxRunsKey: "repo-{repo}"},
		{Name: "plain", MaxRuns: 1},
	}}
	now := time.Now()
	p, err := startplan.New(cat, startplan.Starter{TaskQueue: "q"}, "keyed", map[string]any{"repo": "web"}, core.StartOptions{}, false, now)
	require.NoError(t, err)
	assert.Equal(t, "flow:keyed:repo-web", p.MaxRunsGroup)
	assert.Equal(t, map[string]int{"flow:keyed:repo-web": 1}, p.RunOpts.Concurrency)

	p, err = startplan.New(cat, startplan.Starter{TaskQueue: "q"}, "plain", nil, core.StartOptions{}, false, now)
	require.NoError(t, err)
	assert.Equal(t, "flow:plain", p.MaxRunsGroup)
	assert.Empty(t, p.RunOpts.Concurrency, "the run adds its flow's group itself")

	_, err = startplan.New(cat, startplan.Starter{TaskQueue: "q"}, "keyed", map[string]any{"org": "acme"}, core.StartOptions{}, false, now)
	var ierr *core.InputError
	require.ErrorAs(t, err, &ierr)
	assert.Contains(t, err.Error(), "bad input for keyed: concurrency key repo-{repo}: the input has no field repo")

	p, err = startplan.New(cat, startplan.Starter{TaskQueue: "q"}, "keyed", map[string]any{"repo": "web"}, core.StartOptions{}, true, now)
	require.NoError(t, err)
	assert.Empty(t, p.RunOpts.Concurrency)
}

// TestMaxRunsPerKeyRunAcquiresItsKeysPermit: a run whose starter gave its key's group
// acquires that group; a run started without it (a schedule, a Child step) renders the
// key from its input, and a run whose input gives no key fails before any step.
func TestMaxRunsPerKeyRunAcquiresItsKeysPermit(t *testing.T) {
	f := Define("unit/keyed", func(ctx *Context, in map[string]any) (none, error) {
		_, err := ctx.Shell("work", activities.Shell{Command: "work"})
		return none{}, err
	}, MaxRunsPerKey("repo-{repo}", 2, core.OverflowQueue))
	for _, tc := range []struct {
		name    string
		memo    map[string]int
		in      map[string]any
		want    map[string]int
		wantErr string
	}{
		{name: "given by the starter", memo: map[string]int{"flow:unit/keyed:repo-api": 2}, in: map[string]any{"repo": "web"},
			want: map[string]int{"flow:unit/keyed:repo-api": 2}},
		{name: "rendered by the run", in: map[string]any{"repo": "web"}, want: map[string]int{"flow:unit/keyed:repo-web": 2}},
		{name: "no key", in: map[string]any{"org": "acme"}, wantErr: "concurrency key repo-{repo}: the input has no field repo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newUnitEnv(t, runConfig{}, f)
			startWith(t, env, protocol.RunOptions{QuotaChecked: true, Concurrency: tc.memo})
			env.RegisterActivityWithOptions(func(context.Context, string, protocol.SemaphoreMessage) error { return nil },
				activity.RegisterOptions{Name: protocol.SemaphoreSignalActivity})
			acquired := map[string]int{}
			env.OnActivity(protocol.SemaphoreSignalActivity, mock.Anything, mock.Anything, mock.Anything).Return(
				func(_ context.Context, signal string, m protocol.SemaphoreMessage) error {
					if signal == protocol.SemaphoreAcquire {
						acquired[m.Group] = m.Limit
						env.SignalWorkflow(protocol.SignalPermit, m.Group)
					}
					return nil
				})
			mockShell(env, deployShell)
			env.ExecuteWorkflow(f.Name(), tc.in)
			require.True(t, env.IsWorkflowCompleted())
			if tc.wantErr != "" {
				require.Error(t, env.GetWorkflowError())
				assert.Contains(t, env.GetWorkflowError().Error(), tc.wantErr)
				assert.Empty(t, acquired)
				return
			}
			require.NoError(t, env.GetWorkflowError())
			assert.Equal(t, tc.want, acquired)
		})
	}
}
