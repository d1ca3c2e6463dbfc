package testsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	temporalsuite "go.temporal.io/sdk/testsuite"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/signals"
)

// Env runs one flow in Temporal's test environment. Create it with NewEnv, register the
// flows, mock steps and schedule people, then Run. An Env runs one flow once.
type Env struct {
	t     testing.TB
	env   *temporalsuite.TestWorkflowEnvironment
	opts  flow.WorkerOptions
	flows []flow.Definition
	acts  []registeredActivity
	rules []llm.ScriptRule

	mu       sync.Mutex
	byStep   map[string]mockResult
	byName   map[string]mockResult
	calls    map[string]int
	actions  []*Action
	ran      bool
	deferred []func()
}

type registeredActivity struct {
	fn   any
	name string
}

type mockResult struct {
	result any
	err    error
}

// NewEnv creates an environment. opts are the worker options the flows run with (guards,
// attempts, directory, caps, quotas, prices); Providers default to the scripted provider
// that ScriptAgent feeds.
func NewEnv(t testing.TB, opts ...flow.WorkerOptions) *Env {
	t.Helper()
	e := &Env{t: t, byStep: map[string]mockResult{}, byName: map[string]mockResult{}, calls: map[string]int{}}
	if len(opts) > 0 {
		e.opts = opts[0]
	}
	// No server here: keyed signals go straight to the run (Signal), and the mailbox and
	// monthly-ledger activities and the starts of triggered flows (flow.OnRunOf), which talk
	// to the server, do nothing (Calls("trigger:<flow>") counts the starts).
	for _, name := range []string{protocol.MailboxSubscribeActivity, protocol.MailboxUnsubscribeActivity, protocol.MailboxPostActivity, protocol.QuotaChargeActivity, protocol.QuotaCheckActivity,
		protocol.QuotaReserveActivity, protocol.QuotaReleaseActivity, protocol.TriggerStartActivity} {
		e.byName[name] = mockResult{}
	}
	var s temporalsuite.WorkflowTestSuite
	s.SetLogger(envLogger())
	e.env = s.NewTestWorkflowEnvironment()
	return e
}

// Temporal returns the underlying Temporal test environment, for what Env does not wrap.
func (e *Env) Temporal() *temporalsuite.TestWorkflowEnvironment { return e.env }

// Register adds flows (child flows too).
func (e *Env) Register(flows ...flow.Definition) { e.flows = append(e.flows, flows...) }

// RegisterActivity adds a custom activity (empty name: the function's name).
func (e *Env) RegisterActivity(fn any, name string) {
	e.acts = append(e.acts, registeredActivity{fn: fn, name: name})
}

// ScriptAgent adds answers for agent steps on the "scripted" model (see llm.ScriptRule).
func (e *Env) ScriptAgent(rules ...llm.ScriptRule) { e.rules = append(e.rules, rules...) }

// MockStep makes the step named step (every run of it, in every branch, or one with its
// activity ID such as "build#2" or "regions/eu/deploy") return result and err instead of
// running. result is the step's result type
// (activities.ShellResult, activities.HTTPResult, activities.AgentResult, or a custom
// activity's result), or anything that encodes to it as JSON.
func (e *Env) MockStep(step string, result any, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byStep[step] = mockResult{result: result, err: err}
}

// MockAgent makes the agent step named step answer text at cost (in USD, e.g. "0.02").
func (e *Env) MockAgent(step, text, cost string) {
	e.MockStep(step, activities.AgentResult{Text: text, CostUSD: decimal.RequireFromString(cost), CostKnown: true, Attempt: 1}, nil)
}

// MockActivity makes every step running the activity name return result and err.
func (e *Env) MockActivity(name string, result any, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.byName[name] = mockResult{result: result, err: err}
}

// Calls is how many times the step (or activity ID) ran, mocked or not.
func (e *Env) Calls(step string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[step]
}

// Action is something a person did during the run, and how the run took it.
type Action struct {
	At   time.Duration
	What string
	// Err is nil when the run accepted it, the refusal otherwise.
	Err error
	// Result is the Update's result, when accepted.
	Result any
}

// Actions lists what people did, in the order scheduled.
func (e *Env) Actions() []*Action { return e.actions }

func (e *Env) schedule(at time.Duration, what string, fn func(a *Action)) *Action {
	a := &Action{At: at, What: what}
	e.actions = append(e.actions, a)
	e.deferred = append(e.deferred, func() { e.env.RegisterDelayedCallback(func() { fn(a) }, at) })
	return a
}

func (e *Env) update(at time.Duration, what, name string, arg any, result any) *Action {
	id := fmt.Sprintf("%s-%d", name, len(e.actions)) // each Update its own ID
	return e.schedule(at, what, func(a *Action) {
		e.env.UpdateWorkflow(name, id, &temporalsuite.TestUpdateCallback{
			OnReject: func(err error) { a.Err = err },
			OnAccept: func() {},
			OnComplete: func(v any, err error) {
				if err != nil {
					a.Err = err
				}
				a.Result = v
			},
		}, arg)
	})
}

// Vote sends a vote as the Update gateflow.approval at the virtual time at (from the
// run's start).
func (e *Env) Vote(at time.Duration, v approval.Vote) *Action {
	return e.update(at, fmt.Sprintf("%s %s by %s", v.Kind, v.Gate, v.By), protocol.UpdateApproval, v, nil)
}

// Approve approves gate as by at the virtual time at.
func (e *Env) Approve(at time.Duration, gate, by string) *Action {
	return e.Vote(at, approval.Vote{Gate: gate, Kind: approval.Approve, By: by})
}

// Reject rejects gate as by, with a comment.
func (e *Env) Reject(at time.Duration, gate, by, comment string) *Action {
	return e.Vote(at, approval.Vote{Gate: gate, Kind: approval.Reject, By: by, Comment: comment})
}

// RequestChanges asks for changes at gate as by; comment says what.
func (e *Env) RequestChanges(at time.Duration, gate, by, comment string) *Action {
	return e.Vote(at, approval.Vote{Gate: gate, Kind: approval.RequestChanges, By: by, Comment: comment})
}

// Answer answers the input request name with data (encoded as JSON) as by.
func (e *Env) Answer(at time.Duration, name string, data any, by string) *Action {
	raw, err := json.Marshal(data)
	if err != nil {
		e.t.Fatalf("testsuite: answer %s: %v", name, err)
	}
	return e.update(at, "answer "+name+" by "+by, protocol.UpdateInput, protocol.InputAnswer{Name: name, Data: raw, By: by}, nil)
}

// Signal sends the signal name (with key, if any) carrying payload (encoded as JSON) to
// the run. An empty id gets one from the time and name.
func (e *Env) Signal(at time.Duration, name, key, id string, payload any) *Action {
	raw, err := json.Marshal(payload)
	if err != nil {
		e.t.Fatalf("testsuite: signal %s: %v", name, err)
	}
	if id == "" {
		id = fmt.Sprintf("test-%s-%d", name, at.Milliseconds())
	}
	env := signals.Envelope{Name: name, Key: key, ID: id, Payload: raw, Sender: "testsuite"}
	return e.schedule(at, "signal "+name, func(*Action) { e.env.SignalWorkflow(protocol.SignalName, env) })
}

// RaiseBudget raises the run's cap to usd (e.g. "5.00") as by.
func (e *Env) RaiseBudget(at time.Duration, usd, by string) *Action {
	return e.update(at, "raise budget to "+usd, protocol.UpdateBudget, protocol.BudgetRaise{To: usd, By: by}, nil)
}

// PauseRun pauses the run at the virtual time at, as `flowctl pause RUN` does (the Update
// gateflow.pause): steps in flight finish, nothing new starts until ResumeRun.
func (e *Env) PauseRun(at time.Duration, by, reason string) *Action {
	return e.update(at, "pause by "+by, protocol.UpdatePause, protocol.RunPause{Action: protocol.ControlPause, By: by, Reason: reason}, nil)
}

// ResumeRun resumes a run paused by PauseRun at the virtual time at.
func (e *Env) ResumeRun(at time.Duration, by string) *Action {
	return e.update(at, "resume by "+by, protocol.UpdatePause, protocol.RunPause{Action: protocol.ControlResume, By: by}, nil)
}

// RunOptions adjust a Run like core.StartOptions adjust a start.
type RunOptions struct {
	MaxCostUSD   string
	BudgetPolicy budget.Policy
	BudgetPause  time.Duration
}

// Run runs the flow name with input to its end (in virtual time) and returns the result.
func (e *Env) Run(name string, input any, opts ...RunOptions) *Result {
	e.t.Helper()
	if e.ran {
		e.t.Fatalf("testsuite: an Env runs one flow; make a new Env for %s", name)
	}
	e.ran = true
	e.register()
	var o RunOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	ro := protocol.RunOptions{MaxCostUSD: o.MaxCostUSD, BudgetPolicy: o.BudgetPolicy, BudgetPause: o.BudgetPause, QuotaChecked: true}
	if err := e.env.SetMemoOnStart(map[string]any{protocol.MemoOptions: ro}); err != nil {
		e.t.Fatalf("testsuite: start options: %v", err)
	}
	for _, f := range e.deferred {
		f()
	}
	e.env.ExecuteWorkflow(name, input)
	r := &Result{env: e, Workflow: name}
	if !e.env.IsWorkflowCompleted() {
		e.t.Fatalf("testsuite: %s did not end (is it waiting for someone who never acts?)", name)
	}
	r.Err = e.env.GetWorkflowError()
	if r.Err == nil {
		var raw json.RawMessage
		if err := e.env.GetWorkflowResult(&raw); err == nil {
			r.Output = raw
		}
	}
	v, err := e.env.QueryWorkflow(protocol.QueryState)
	if err != nil {
		e.t.Fatalf("testsuite: query %s: %v", protocol.QueryState, err)
	}
	if err := v.Get(&r.State); err != nil {
		e.t.Fatalf("testsuite: decode state: %v", err)
	}
	return r
}

func (e *Env) register() {
	opts := e.opts
	if opts.Providers == nil {
		opts.Providers = map[string]llm.Provider{llm.ProviderScripted: llm.NewScripted(e.rules...)}
	}
	if opts.Directory == nil {
		opts.Directory = approval.StaticDirectory{}
	}
	if err := flow.RegisterWorkflows(e.env, opts, e.flows...); err != nil {
		e.t.Fatalf("testsuite: %v", err)
	}
	if err := flow.RegisterActivities(mockingRegistry{e: e}, opts); err != nil {
		e.t.Fatalf("testsuite: %v", err)
	}
	for _, a := range e.acts {
		name := a.name
		if name == "" {
			name = funcName(a.fn)
		}
		mockingRegistry{e: e}.RegisterActivityWithOptions(a.fn, activity.RegisterOptions{Name: name})
	}
}

// mockingRegistry registers activities wrapped so that mocks by step or activity name win.
type mockingRegistry struct{ e *Env }

func (m mockingRegistry) RegisterActivityWithOptions(fn any, o activity.RegisterOptions) {
	m.e.env.RegisterActivityWithOptions(m.e.wrap(fn, o.Name), o)
}

// RegisterActivity registers fn under its function name (gateflow always names them).
func (m mockingRegistry) RegisterActivity(fn any) {
	m.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: funcName(fn)})
}

// RegisterDynamicActivity is not wrapped: gateflow registers no dynamic activities.
func (m mockingRegistry) RegisterDynamicActivity(fn any, o activity.DynamicRegisterOptions) {
	m.e.env.RegisterDynamicActivity(fn, o)
}

var (
	ctxType = reflect.TypeOf((*context.Context)(nil)).Elem()
	errType = reflect.TypeOf((*error)(nil)).Elem()
)

// wrap returns fn with the same signature, answering from a mock when there is one.
func (e *Env) wrap(fn any, name string) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.NumIn() == 0 || t.In(0) != ctxType {
		return fn
	}
	return reflect.MakeFunc(t, func(args []reflect.Value) []reflect.Value {
		ctx := args[0].Interface().(context.Context)
		id := activity.GetInfo(ctx).ActivityID
		step := id
		if i := strings.LastIndexByte(id, '#'); i > 0 {
			step = id[:i]
		}
		// Inside a branch or fan-out item the ID is its path ("regions/eu/deploy"): the
		// step's own name is its last element.
		name0 := step[strings.LastIndexByte(step, '/')+1:]
		e.mu.Lock()
		e.calls[step]++
		if id != step {
			e.calls[id]++
		}
		if name0 != step {
			e.calls[name0]++
		}
		m, ok := e.byStep[id]
		if !ok {
			m, ok = e.byStep[step]
		}
		if !ok {
			m, ok = e.byStep[name0]
		}
		if !ok {
			m, ok = e.byName[name]
		}
		e.mu.Unlock()
		if !ok {
			return v.Call(args)
		}
		return mockValues(t, m)
	}).Interface()
}

// mockValues builds an activity's return values from a mock.
func mockValues(t reflect.Type, m mockResult) []reflect.Value {
	out := make([]reflect.Value, t.NumOut())
	errV := reflect.Zero(errType)
	if m.err != nil {
		errV = reflect.ValueOf(m.err)
	}
	if t.NumOut() == 1 {
		out[0] = errV
		return out
	}
	rt := t.Out(0)
	res := reflect.New(rt).Elem()
	if m.result != nil {
		rv := reflect.ValueOf(m.result)
		if rv.Type().AssignableTo(rt) {
			res.Set(rv)
		} else if b, err := json.Marshal(m.result); err == nil {
			_ = json.Unmarshal(b, res.Addr().Interface())
		}
	}
	out[0], out[1] = res, errV
	return out
}

func funcName(fn any) string {
	name := fmt.Sprint(reflect.TypeOf(fn))
	if f := reflect.ValueOf(fn); f.Kind() == reflect.Func {
		full := runtimeName(f)
		name = full[strings.LastIndex(full, ".")+1:]
	}
	return strings.TrimSuffix(name, "-fm")
}

// quietLogger drops the test environment's logs.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

var _ log.Logger = quietLogger{}

// envLogger is quiet unless GATEFLOW_TEST_LOG is set; fatal reports of the test
// environment are printed either way.
func envLogger() log.Logger {
	if os.Getenv("GATEFLOW_TEST_LOG") != "" {
		return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	}
	return errorLogger{}
}

// errorLogger prints errors only.
type errorLogger struct{ quietLogger }

func (errorLogger) Error(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"testsuite:", msg}, kv...)...)
}

// Run runs the flow f with input in, as Env.Run does (registering f first when it is not
// yet), and returns its output decoded as O with the Result. A run that failed returns O's
// zero value; r.Err says why.
//
//	out, r := testsuite.Run(env, examples.Hello, examples.HelloInput{Name: "Ada"})
func Run[I, O any](e *Env, f *flow.Flow[I, O], in I, opts ...RunOptions) (O, *Result) {
	e.t.Helper()
	var out O
	known := false
	for _, d := range e.flows {
		known = known || d.Name() == f.Name()
	}
	if !known {
		e.Register(f)
	}
	r := e.Run(f.Name(), in, opts...)
	if r.Err == nil && len(r.Output) > 0 {
		if err := json.Unmarshal(r.Output, &out); err != nil {
			e.t.Fatalf("testsuite: decode the output of %s as %T: %v", f.Name(), out, err)
		}
	}
	return out, r
}
