package flow

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/startplan"
	"github.com/gateflow/gateflow/internal/typeschema"
)

type someType struct {
	Name string `json:"name"`
}

type otherType struct {
	OK bool `json:"ok"`
}

func someHandler(*Context, someType) (otherType, error) { return otherType{}, nil }

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"hello", true},
		{"a", true},
		{"9lives", true},
		{"delivery/web.release-v2_final", true},
		{strings.Repeat("x", 200), true},
		{strings.Repeat("x", 201), false},
		{"", false},
		{"-leading-dash", false},
		{"_leading", false},
		{".hidden", false},
		{"/abs", false},
		{"has space", false},
		{"tab\tname", false},
		{"quote'", false},
		{"ünïcode", false},
		{"trailing\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := startplan.ValidateName(tt.name)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "want 1-200 letters, digits or _.-/ starting with a letter or digit")
			}
		})
	}
}

func TestDefineInfo(t *testing.T) {
	f := Define("delivery/release", someHandler,
		Description("Build and ship"), Category("delivery/web"), Version("3"),
		MaxCostUSD(decimal.RequireFromString("2.50")), nil)
	require.NoError(t, f.Err())
	assert.Equal(t, "delivery/release", f.Name())
	info := f.Info()
	assert.Equal(t, core.WorkflowInfo{
		Name:        "delivery/release",
		Description: "Build and ship",
		Category:    "delivery/web",
		Version:     "3",
		MaxCostUSD:  "2.5",
		InputType:   "github.com/gateflow/gateflow/flow.someType",
		OutputType:  "github.com/gateflow/gateflow/flow.otherType",
		InputSchema: typeschema.ForStart(reflect.TypeFor[someType]()),
	}, info)
	assert.NotNil(t, f.workflow(), "the Temporal workflow function")
	var d Definition = f
	assert.Equal(t, f.Name(), d.Name())
}

func TestDefineTypeNames(t *testing.T) {
	tests := []struct {
		name    string
		def     Definition
		wantIn  string
		wantOut string
	}{
		{"builtin types", Define("b", func(*Context, string) (int, error) { return 0, nil }), "string", "int"},
		{"slices and maps", Define("s", func(*Context, []someType) (map[string]otherType, error) { return nil, nil }),
			"[]flow.someType", "map[string]flow.otherType"},
		{"interface", Define("i", func(*Context, any) (any, error) { return nil, nil }), "interface {}", "interface {}"},
		{"time", Define("t", func(*Context, time.Time) (time.Duration, error) { return 0, nil }), "time.Time", "time.Duration"},
		{"activities result", Define("a", func(*Context, activities.Shell) (activities.ShellResult, error) {
			return activities.ShellResult{}, nil
		}), "github.com/gateflow/gateflow/activities.Shell", "github.com/gateflow/gateflow/activities.ShellResult"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, tt.def.Err())
			assert.Equal(t, tt.wantIn, tt.def.Info().InputType)
			assert.Equal(t, tt.wantOut, tt.def.Info().OutputType)
		})
	}
}

func TestDefineKeepsErrors(t *testing.T) {
	failing := func(*core.WorkflowInfo) error { return errors.New("option broke") }
	tests := []struct {
		name     string
		flowName string
		handler  func(*Context, someType) (otherType, error)
		opts     []Option
		wantErrs []string
	}{
		{"bad name", "bad name", someHandler, nil, []string{`define bad name: flow name "bad name": want`}},
		{"empty name", "", someHandler, nil, []string{`define : flow name ""`}},
		{"nil handler", "ok", nil, nil, []string{"define ok: handler is nil"}},
		{"negative max cost", "ok", someHandler, []Option{MaxCostUSD(decimal.RequireFromString("-0.01"))}, []string{"max cost -0.01 is negative"}},
		{"failing option", "ok", someHandler, []Option{failing}, []string{"option broke"}},
		{"all together", "", nil, []Option{failing, MaxCostUSD(decimal.NewFromInt(-1))},
			[]string{`flow name ""`, "handler is nil", "option broke", "max cost -1 is negative"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f *Flow[someType, otherType]
			require.NotPanics(t, func() { f = Define(tt.flowName, tt.handler, tt.opts...) })
			require.Error(t, f.Err())
			for _, want := range tt.wantErrs {
				assert.Contains(t, f.Err().Error(), want)
			}
			assert.Equal(t, tt.flowName, f.Info().Name, "the info is kept for error reports")
		})
	}
}

func TestMaxCostUSDZeroIsAllowed(t *testing.T) {
	f := Define("free", someHandler, MaxCostUSD(decimal.Zero))
	require.NoError(t, f.Err())
	assert.Equal(t, "0", f.Info().MaxCostUSD)
}

func TestRunStateSteps(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var st runs.State
	names := []string{"build", "test", "build", "deploy", "build", "test"}
	wantIDs := []string{"build", "test", "build#2", "deploy", "build#3", "test#2"}
	for i, n := range names {
		idx := beginStep(&st, "", n, runs.KindShell, t0.Add(time.Duration(i)*time.Second))
		assert.Equal(t, i, idx)
	}
	for i, rec := range st.Steps {
		assert.Equal(t, names[i], rec.Name)
		assert.Equal(t, wantIDs[i], rec.ActivityID)
		assert.Equal(t, runs.KindShell, rec.Kind)
		assert.Equal(t, runs.StepRunning, rec.Status)
		assert.Equal(t, 1, rec.Attempt)
		assert.Nil(t, rec.EndedAt)
		assert.Equal(t, 10*time.Second-time.Duration(i)*time.Second, rec.Duration(t0.Add(10*time.Second)), "running steps count until now")
	}

	code := 2
	endStep(&st, 1, t0.Add(5*time.Second), runs.StepFailed, 3, "exit code 2", "", &code)
	rec := st.Steps[1]
	assert.Equal(t, runs.StepFailed, rec.Status)
	assert.Equal(t, 3, rec.Attempt)
	assert.Equal(t, "exit code 2", rec.Error)
	require.NotNil(t, rec.ExitCode)
	assert.Equal(t, 2, *rec.ExitCode)
	assert.Equal(t, 4*time.Second, rec.Duration(t0.Add(time.Hour)), "ended steps keep their duration")

	endStep(&st, 0, t0.Add(time.Second), runs.StepCompleted, 0, "", "out", nil)
	assert.Equal(t, 1, st.Steps[0].Attempt, "attempt 0 keeps the recorded attempt")
	assert.Equal(t, "out", st.Steps[0].Output)

	finishRun(&st, t0.Add(time.Minute), runs.StatusFailed, "boom")
	assert.Equal(t, runs.StatusFailed, st.Status)
	assert.Equal(t, "boom", st.Error)
	require.NotNil(t, st.EndedAt)
	assert.Equal(t, t0.Add(time.Minute), *st.EndedAt)

	c := cloneState(&st)
	c.Steps[0].Name = "changed"
	assert.Equal(t, "build", st.Steps[0].Name, "clone copies the steps")
}

func TestPreview(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 4, "hel…"},
		{"hello", 1, "…"},
		{"hello", 0, "…"},
		{"", 0, ""},
		{"héllo wörld", 6, "héllo…"},
		{"日本語のテキスト", 4, "日本語…"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := display.Preview(tt.s, tt.n)
			assert.Equal(t, tt.want, got)
			if tt.n > 0 {
				assert.LessOrEqual(t, len([]rune(got)), tt.n)
			}
		})
	}
}

func TestCatalogLookupAndNames(t *testing.T) {
	c := &core.Catalog{TaskQueue: "q", Workflows: []core.WorkflowInfo{{Name: "alpha", Version: "1"}, {Name: "mid", Version: "2"}}}
	assert.Equal(t, []string{"alpha", "mid"}, c.Names())
	mid, ok := c.Lookup("mid")
	require.True(t, ok)
	assert.Equal(t, "2", mid.Version)
	_, ok = c.Lookup("nope")
	assert.False(t, ok)
	var empty core.Catalog
	assert.Equal(t, []string{}, empty.Names())
}

// badDef is a Definition with a name of our choosing.
type badDef struct {
	name string
	err  error
}

func (d badDef) Name() string                    { return d.name }
func (d badDef) Info() core.WorkflowInfo         { return core.WorkflowInfo{Name: d.name} }
func (d badDef) Err() error                      { return d.err }
func (d badDef) workflow() any                   { return nil }
func (d badDef) workflowWith(runConfig) any      { return nil }
func (d badDef) dynamicWith(runConfig) dynamicFn { return nil }

func TestWorkerValidate(t *testing.T) {
	good := Define("good", someHandler)
	other := Define("other", someHandler)
	tests := []struct {
		name     string
		flows    []Definition
		wantErrs []string
	}{
		{"none", nil, nil},
		{"distinct flows", []Definition{good, other}, nil},
		{"duplicate", []Definition{good, other, Define("good", someHandler)}, []string{"flow good is defined twice"}},
		{"nil flow", []Definition{good, nil}, []string{"flow 1 is nil"}},
		{"reserved name", []Definition{Define(protocol.CatalogWorkflowType, someHandler)}, []string{"flow name gateflow.catalog is reserved"}},
		{"definition error", []Definition{Define("x", (func(*Context, someType) (otherType, error))(nil))}, []string{"define x: handler is nil"}},
		{"all reported together", []Definition{
			nil,
			Define("bad name", someHandler),
			good, good,
			badDef{name: protocol.CatalogWorkflowType},
			badDef{name: "custom", err: errors.New("custom is broken")},
		}, []string{"flow 0 is nil", `flow name "bad name"`, "flow good is defined twice", "flow name gateflow.catalog is reserved", "custom is broken"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWorker(nil, WorkerOptions{}, tt.flows...)
			err := w.Validate()
			if len(tt.wantErrs) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, want := range tt.wantErrs {
				assert.Contains(t, err.Error(), want)
			}
			assert.Len(t, strings.Split(err.Error(), "\n"), len(tt.wantErrs), "one line per problem: %s", err)
		})
	}
}

func TestNewWorkerDefaults(t *testing.T) {
	w := NewWorker(nil, WorkerOptions{}, Define("a", someHandler), Define("b", someHandler))
	assert.Equal(t, core.DefaultTaskQueue, w.TaskQueue())
	assert.Equal(t, 30*time.Second, w.opts.StopTimeout)
	infos := w.Flows()
	require.Len(t, infos, 2)
	assert.Equal(t, "a", infos[0].Name)
	assert.Equal(t, "b", infos[1].Name)

	w = NewWorker(nil, WorkerOptions{TaskQueue: "custom", StopTimeout: time.Second})
	assert.Equal(t, "custom", w.TaskQueue())
	assert.Equal(t, time.Second, w.opts.StopTimeout)
	w.RegisterActivity(someHandler, "x")
	assert.Len(t, w.extra, 1)
	w.Stop() // not started: no-op
}

func TestActivityOptions(t *testing.T) {
	custom := temporal.RetryPolicy{MaximumAttempts: 9}
	tests := []struct {
		name       string
		o          stepOptions
		wantStart  time.Duration
		wantHB     time.Duration
		wantRetry  *temporal.RetryPolicy
		nonRetries []string
	}{
		{"defaults", stepOptions{}, DefaultStepTimeout + 30*time.Second, DefaultHeartbeatTimeout,
			&temporal.RetryPolicy{MaximumAttempts: DefaultStepAttempts, NonRetryableErrorTypes: []string{"x"}}, []string{"x"}},
		{"step timeout", stepOptions{timeout: time.Minute, heartbeatTimeout: 5 * time.Second}, 90 * time.Second, 5 * time.Second,
			&temporal.RetryPolicy{MaximumAttempts: DefaultStepAttempts}, nil},
		{"custom retry", stepOptions{retry: &custom}, DefaultStepTimeout + 30*time.Second, DefaultHeartbeatTimeout, &custom, []string{"ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ao := activityOptions("id#2", "id", runs.KindShell, tt.o, tt.nonRetries)
			assert.Equal(t, "id#2", ao.ActivityID)
			assert.Equal(t, "id (shell)", ao.Summary)
			assert.Equal(t, tt.wantStart, ao.StartToCloseTimeout)
			assert.Equal(t, tt.wantHB, ao.HeartbeatTimeout)
			assert.Equal(t, tt.wantRetry, ao.RetryPolicy)
		})
	}
	var o stepOptions
	for _, opt := range []StepOption{StepTimeout(time.Minute), HeartbeatTimeout(time.Second), Retry(custom)} {
		opt(&o)
	}
	assert.Equal(t, stepOptions{timeout: time.Minute, heartbeatTimeout: time.Second, retry: &custom}, o)
}

// wire sends err through the failure converter, as errors reach workflow code.
func wire(err error) error {
	fc := temporal.GetDefaultFailureConverter()
	return fc.FailureToError(fc.ErrorToFailure(err))
}

func TestErrorMessageAndFailureDetails(t *testing.T) {
	exit := temporal.NewApplicationError("exit code 4: nope", activities.ShellExitErrorType,
		activities.ShellFailure{ExitCode: 4, StderrTail: "nope", Attempt: 2})
	timeout := temporal.NewApplicationError("shell: timed out after 1s", "gateflow.ShellTimeout",
		activities.ShellFailure{ExitCode: -1, Attempt: 3})
	tests := []struct {
		name        string
		err         error
		wantMsg     string
		wantAttempt int
		wantCode    *int
	}{
		{"shell exit", exit, "exit code 4: nope", 2, intp(4)},
		{"wrapped shell exit", &StepError{Step: "s", Err: exit}, "exit code 4: nope", 2, intp(4)},
		{"timeout keeps the attempt, no exit code", timeout, "shell: timed out after 1s", 3, nil},
		{"application error without details", temporal.NewApplicationError("plain", "T"), "plain", 0, nil},
		{"details of another shape, as decoded in a workflow", wire(temporal.NewApplicationError("odd", "T", "just a string")), "odd", 0, nil},
		{"shell exit as decoded in a workflow", wire(exit), "exit code 4: nope", 2, intp(4)},
		{"timeout error", temporal.NewTimeoutError(0, nil), "timed out (unspecified)", 0, nil},
		{"cancelled", temporal.NewCanceledError(), "cancelled", 0, nil},
		{"plain error", errors.New("plain"), "plain", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantMsg, errorMessage(tt.err))
			attempt, code := failureDetails(tt.err)
			assert.Equal(t, tt.wantAttempt, attempt)
			assert.Equal(t, tt.wantCode, code)
		})
	}
	se := &StepError{Step: "build", Kind: runs.KindShell, Err: exit}
	assert.Equal(t, "step build: exit code 4: nope", se.Error())
	var app *temporal.ApplicationError
	assert.True(t, errors.As(se, &app), "StepError unwraps to the Temporal error")
	assert.Equal(t, reflect.TypeOf(exit), reflect.TypeOf(errors.Unwrap(se)))
}
