package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gateflow/gateflow/activities"

	"github.com/gateflow/gateflow/items"

	"github.com/gateflow/gateflow/runs"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/flowdef"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/flowdef/serve"
	"github.com/gateflow/gateflow/gates"
	"github.com/gateflow/gateflow/testsuite"
)

// defCase is one run of a served definition, started through flowclient.Client: act plays the
// people's part while it runs, then the final status, result and step records are
// checked.
type defCase struct {
	name string
	// flow is the definition started (default: name).
	flow string
	// input is the run's input (nil: none); opts its start options.
	input func(t *testing.T, c *flowclient.Client) any
	opts  core.StartOptions
	// act runs once the run started (votes, answers, signals).
	act func(t *testing.T, c *flowclient.Client, run string)
	// status is the final status (default completed); output the result (JSON), unless
	// empty; errs are substrings of the run's error.
	status runs.Status
	output string
	errs   []string
	check  func(t *testing.T, c *flowclient.Client, d *runs.Description)
}

// defName is the name: of a definition's source.
var defName = regexp.MustCompile(`(?m)^name: (\S+)$`)

// defHost is what the definitions of the node and option tests use on their worker: a
// registered action, a fallback action, an item provider, a gate resolver, a Go flow
// (for call) and scripted agent answers.
type defHost struct {
	mu        sync.Mutex
	fallbacks []activities.ActionCall
}

func (h *defHost) calls() []activities.ActionCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]activities.ActionCall(nil), h.fallbacks...)
}

// openTickets is the item provider open-tickets: two tickets of the scope.
type openTickets struct{}

func (openTickets) Name() string { return "open-tickets" }

func (openTickets) Items(_ context.Context, scope string, filter map[string]string) ([]items.Item, error) {
	return []items.Item{
		{ID: "T-1", Type: "ticket", Ref: scope, Context: map[string]string{"path": "a.go", "team": filter["team"]}},
		{ID: "T-2", Type: "ticket", Ref: scope, Context: map[string]string{"path": "b.go", "team": filter["team"]}},
	}, nil
}

// ticketClosed is the gate resolver ticket-closed: pending on the first poll, then
// approved (or rejected when params.ticket is "WONTFIX").
type ticketClosed struct{}

func (ticketClosed) Type() string { return "ticket-closed" }

func (ticketClosed) Poll(_ context.Context, p gates.Params) (gates.Poll, error) {
	var params struct {
		Ticket string `json:"ticket"`
	}
	if err := p.Decode(&params); err != nil {
		return gates.Poll{}, err
	}
	switch {
	case p.Poll < 2:
		return gates.Pending("ticket " + params.Ticket + " open"), nil
	case params.Ticket == "WONTFIX":
		return gates.Rejected("ticket " + params.Ticket + " will not be fixed"), nil
	default:
		return gates.Approved(fmt.Sprintf("ticket %s closed after %d polls", params.Ticket, p.Poll)), nil
	}
}

// doubleFlow is the Go flow it-go-double that call nodes run as a child.
var doubleFlow = flow.Define("it-go-double", func(ctx *flow.Context, in struct {
	N int `json:"n"`
}) (map[string]int, error) {
	return map[string]int{"doubled": in.N * 2}, nil
})

// stalled is the agent provider stalled: it never answers (until its context ends).
type stalled struct{}

func (stalled) Name() string { return "stalled" }

func (stalled) Complete(ctx context.Context, _ llm.Request) (llm.Response, error) {
	<-ctx.Done()
	return llm.Response{}, ctx.Err()
}

// defRules are the scripted agent's answers for the node and option tests.
var defRules = []llm.ScriptRule{
	{Match: "Triage", Text: `{"severity": "high", "summary": "down"}`, InputTokens: 1000, OutputTokens: 100},
	{Match: "Review a.go", Text: "fine"},
	{Match: "Review b.go", Text: "bad"},
	{Match: "Summarise weak", Text: `{"score": 60}`},
	{Match: "Summarise", Text: `{"score": 90}`},
	{Match: "Chat", Text: "hello", InputTokens: 4000, OutputTokens: 2000},
	{Text: "ok"},
}

// serveDefs writes defs to a directory and serves it with serve.Dir (as flow-worker
// --flows does) on a worker of its own queue that has defHost's registrations.
func serveDefs(t *testing.T, queue string, defs []string, opts flow.WorkerOptions) (*flowclient.Client, *defHost) {
	t.Helper()
	dir := t.TempDir()
	for _, src := range defs {
		m := defName.FindStringSubmatch(src)
		require.NotNil(t, m, "a definition without a name: line:\n%s", src)
		require.NoError(t, os.WriteFile(filepath.Join(dir, m[1]+".yaml"), []byte(strings.TrimLeft(src, "\n")), 0o644))
	}
	opts.TaskQueue, opts.StopTimeout = queue, 5*time.Second
	opts.Directory = approval.StaticDirectory{"ops": {"alice", "bob"}}
	opts.Providers = map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(defRules...), "stalled": stalled{}}
	opts.ItemProviders = []items.Provider{openTickets{}}
	opts.GateResolvers = []gates.Resolver{ticketClosed{}}
	w := flow.NewWorker(shared.tc, opts, doubleFlow)
	h := &defHost{}
	w.RegisterActivity(func(_ context.Context, in map[string]any) (map[string]any, error) {
		return map[string]any{"posted": in["body"]}, nil
	}, "post-comment")
	w.RegisterFallbackAction(func(_ context.Context, call activities.ActionCall) (any, error) {
		h.mu.Lock()
		h.fallbacks = append(h.fallbacks, call)
		h.mu.Unlock()
		return map[string]any{"handled": call.Name}, nil
	})
	_, err := serve.Dir(w, dir, serve.Options{Interp: []interp.Option{interp.DefaultModel(llm.ProviderScripted)}})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return flowclient.New(shared.tc, flowclient.Options{TaskQueue: queue, Identity: "tester"}), h
}

// runDefCases runs every case in parallel subtests.
func runDefCases(t *testing.T, c *flowclient.Client, cases []defCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := ctxT(t, 2*time.Minute)
			name := tc.flow
			if name == "" {
				name = tc.name
			}
			var in any
			if tc.input != nil {
				in = tc.input(t, c)
			}
			run, err := c.Start(ctx, name, in, tc.opts)
			require.NoError(t, err)
			if tc.act != nil {
				tc.act(t, c, run.ID)
			}
			d, err := c.Wait(ctx, run.ID)
			require.NoError(t, err)
			want := tc.status
			if want == "" {
				want = runs.StatusCompleted
			}
			require.Equal(t, want, d.Status, "error: %s", d.Error)
			if tc.output != "" {
				assert.JSONEq(t, tc.output, string(d.Result))
			}
			for _, e := range tc.errs {
				assert.Contains(t, d.Error, e)
			}
			if tc.check != nil {
				tc.check(t, c, d)
			}
		})
	}
}

// inputOf is an input func returning v.
func inputOf(v any) func(*testing.T, *flowclient.Client) any {
	return func(*testing.T, *flowclient.Client) any { return v }
}

// uniqueKey is a signal or mailbox key no other run of the test binary uses.
func uniqueKey(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }

// replayDef records run's history and replays it on the definition of src.
func replayDef(t *testing.T, run, src string) {
	t.Helper()
	def, err := flowdef.Parse("replay.yaml", []byte(src))
	require.NoError(t, err)
	f, err := interp.Flow(def, interp.DefaultModel(llm.ProviderScripted))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, testsuite.RecordHistory(ctxT(t, time.Minute), shared.tc, run, file))
	assert.NoError(t, testsuite.Replay(file, flow.WorkerOptions{}, f), "the history of %s replays", run)
}

// defSource is the definition of defs named name.
func defSource(t *testing.T, defs []string, name string) string {
	t.Helper()
	for _, src := range defs {
		if m := defName.FindStringSubmatch(src); m != nil && m[1] == name {
			return src
		}
	}
	t.Fatalf("no definition %s", name)
	return ""
}
