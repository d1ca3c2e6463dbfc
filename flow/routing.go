package flow

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
)

// Route says what happens when a step fails: give it to OnFailure or OnTimeout. The
// routes are
//
//   - Continue: the step may fail. As with AllowFailure it is recorded as failed (or
//     timed_out) and allowed, the handler gets the zero result and an *AllowedFailure, and
//     a run that otherwise completes ends warning.
//   - Halt: the step fails as it would without a route (the default); OnTimeout(Halt)
//     keeps a timeout from taking the OnFailure route.
//   - Fallback(spec): the fallback step runs as "NAME/fallback" and its result (or its
//     error) is the step's.
//   - Goto(label): the step's failure re-enters the enclosing ctx.Label(label, ...).
//
// Continue and Halt are the fan-out policies of the same names (ItemFailPolicy), which
// are routes too; SkipDependents is not, and a step given it fails without being
// dispatched. Route is sealed: only this package makes routes.
//
// Routes apply to the activity steps Shell, HTTP, Agent and Step, and to OnError and
// Always steps (which may not Goto). In a Parallel call only Continue applies: a Parallel
// step with a Fallback or Goto route fails without being dispatched (run the step in a
// BranchStep to route it). Child steps take AllowFailure, not routes. A cancelled step is
// never routed, nor is a step the budget or a guard refused.
type Route interface {
	stepRoute() routeSpec
}

// routeKind is what a route does.
type routeKind int

const (
	routeFail routeKind = iota
	routeContinue
	routeFallback
	routeGoto
)

// routeSpec is a route as the run applies it.
type routeSpec struct {
	kind  routeKind
	spec  activities.Spec // routeFallback
	opts  []StepOption    // routeFallback: the fallback step's own options
	label string          // routeGoto
	// invalid says why the route cannot be used; the step then fails undispatched.
	invalid error
}

func (p ItemFailPolicy) stepRoute() routeSpec {
	switch p {
	case Halt:
		return routeSpec{kind: routeFail}
	case Continue:
		return routeSpec{kind: routeContinue}
	}
	return routeSpec{invalid: fmt.Errorf("fan-out policy %d (SkipDependents) is not a step route: use Continue, Halt, Fallback or Goto", int(p))}
}

type fallbackRoute struct {
	spec activities.Spec
	opts []StepOption
}

func (r fallbackRoute) stepRoute() routeSpec {
	if r.spec == nil {
		return routeSpec{invalid: errors.New("fallback: the fallback step has no spec")}
	}
	return routeSpec{kind: routeFallback, spec: r.spec, opts: r.opts}
}

// Fallback is the route that runs spec as the step "NAME/fallback" when the step NAME
// fails, and returns the fallback's result as the step's (agentd's fallback agent, on_fail).
// The fallback must be of the step's kind (an activities.Agent for an agent step, an
// activities.Shell for a shell step, an activities.HTTP for an HTTP step): a fallback of
// another kind, or on a custom activity step, fails the step before anything is
// dispatched. Both steps are recorded; the failed one says "fallback NAME/fallback" in
// runs.Step.Route. The fallback gets the options of the context (ctx.With) and opts, not
// the step's own; its failure is returned as it is and is not routed again (give it
// AllowFailure to let it fail). An agent fallback reserves its own budget as any agent
// step does.
func Fallback(spec activities.Spec, opts ...StepOption) Route {
	return fallbackRoute{spec: spec, opts: append([]StepOption(nil), opts...)}
}

type gotoRoute struct{ label string }

func (r gotoRoute) stepRoute() routeSpec {
	if strings.TrimSpace(r.label) == "" {
		return routeSpec{invalid: errors.New("goto: the label is empty")}
	}
	return routeSpec{kind: routeGoto, label: r.label}
}

// Goto is the route that sends a failed step back to the label: the step returns a
// *GotoError, which the handler passes on as any error (if err != nil { return err }),
// and the enclosing ctx.Label(label, ...) catches it and runs its body again, at most
// MaxVisits times. See Context.Label.
func Goto(label string) Route { return gotoRoute{label: label} }

// OnFailure routes the step's failures (see Route): Continue, Halt, Fallback(spec) or
// Goto(label). It applies to timeouts too, unless OnTimeout is given. An explicit route
// takes precedence over AllowFailure.
func OnFailure(r Route) StepOption {
	return func(o *stepOptions) { o.onFailure = routeOf("OnFailure", r) }
}

// OnTimeout routes the step's failure when a timeout ended it (runs.Step.Status
// timed_out: a Temporal start-to-close, schedule-to-start, schedule-to-close or heartbeat
// timeout, or a shell or HTTP step's own Timeout), instead of OnFailure.
func OnTimeout(r Route) StepOption {
	return func(o *stepOptions) { o.onTimeout = routeOf("OnTimeout", r) }
}

func routeOf(option string, r Route) *routeSpec {
	if r == nil {
		return &routeSpec{invalid: fmt.Errorf("%s: the route is nil", option)}
	}
	rs := r.stepRoute()
	if rs.invalid != nil {
		rs.invalid = fmt.Errorf("%s: %w", option, rs.invalid)
	}
	return &rs
}

// QueueTimeout bounds how long the step may wait in its task queue for a worker to pick
// it up (the activity's ScheduleToStartTimeout). A step that waits longer ends timed_out
// with runs.Step.Timeout "schedule_to_start" and is not retried (Temporal does not retry
// that timeout); OnTimeout routes it. Zero, the default, waits as long as the step's
// other timeouts allow.
func QueueTimeout(d time.Duration) StepOption {
	return func(o *stepOptions) { o.queueTimeout = d }
}

// routeFor is the route that applies to a step that ended with status, if any.
func (o stepOptions) routeFor(status runs.StepStatus) (routeSpec, bool) {
	if status == runs.StepTimedOut && o.onTimeout != nil {
		return *o.onTimeout, true
	}
	if o.onFailure != nil {
		return *o.onFailure, true
	}
	return routeSpec{}, false
}

// allowed reports whether a step that ended with status is allowed to fail: its route
// is Continue or, without a route, it has AllowFailure.
func (o stepOptions) allowed(status runs.StepStatus) bool {
	if status == runs.StepCancelled {
		return false
	}
	if r, ok := o.routeFor(status); ok {
		return r.kind == routeContinue
	}
	return o.allowFailure
}

// GotoError is what a step routed with Goto returns when it fails: Step failed, Err is
// its *StepError, and Label is where it goes. Return it from the handler code as any
// error; the enclosing ctx.Label(Label, ...) catches it and runs its body again.
//
// When the label has run its body MaxVisits times already, ctx.Label returns the
// GotoError with Visits and MaxVisits set instead ("goto build: visited 3 times (max
// 3)"), and no label catches it again. A GotoError no label catches fails the run, naming
// the label. errors.As and errors.Is see through it to the step's error.
type GotoError struct {
	Label string
	Step  string
	Err   error
	// Visits and MaxVisits are set once the label gave up: it ran its body Visits times,
	// the most it may.
	Visits, MaxVisits int
	// runLimit: the run's MaxRunReentries stopped the label, not its own MaxVisits.
	runLimit bool
	// unknown: no enclosing label caught the error; the run fails with it.
	unknown bool
}

// Error implements error.
func (e *GotoError) Error() string {
	cause := "step " + e.Step + " failed"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	switch {
	case e.unknown:
		return fmt.Sprintf("goto %s: no enclosing label %q (ctx.Label) caught the failure of step %s: %s",
			e.Label, e.Label, e.Step, errorMessage(e.Err))
	case e.runLimit:
		return fmt.Sprintf("goto %s: the run re-entered labels %d times (max %d): %s", e.Label, MaxRunReentries, MaxRunReentries, cause)
	case e.MaxVisits > 0:
		return fmt.Sprintf("goto %s: visited %d times (max %d): %s", e.Label, e.Visits, e.MaxVisits, cause)
	}
	return fmt.Sprintf("goto %s: %s", e.Label, cause)
}

// Unwrap returns the step's error.
func (e *GotoError) Unwrap() error { return e.Err }

// pending reports whether the error still looks for its label.
func (e *GotoError) pending() bool { return e.MaxVisits == 0 && !e.runLimit && !e.unknown }

// LabelOption adjusts a label (Context.Label).
type LabelOption func(*labelOptions)

type labelOptions struct{ maxVisits int }

// MaxVisits is how often a label may run its body, the first visit included: 1 to
// MaxLabelVisits (default DefaultMaxVisits).
func MaxVisits(n int) LabelOption { return func(o *labelOptions) { o.maxVisits = n } }

// labelFrame is a label the context runs inside; frames nest through parent.
type labelFrame struct {
	name        string
	visits, max int
	parent      *labelFrame
}

func (f *labelFrame) find(name string) *labelFrame {
	for ; f != nil; f = f.parent {
		if f.name == name {
			return f
		}
	}
	return nil
}

// Label runs body as the label name, which steps inside route to with
// OnFailure(Goto(name)) or OnTimeout(Goto(name)): such a step's failure is a *GotoError
// that body returns (the steps' usual if err != nil { return err }), and Label runs body
// again, from the top. Its steps are recorded again (build, build#2, ...), each failed
// one saying where it went in runs.Step.Route ("goto build (2 of 3)"), and the label's
// visits are in runs.State.Labels.
//
// Label runs body at most MaxVisits times (DefaultMaxVisits), and a run re-enters labels
// at most MaxRunReentries times in all; past that Label returns the GotoError with Visits
// and MaxVisits set, wrapping the last failure ("goto build: visited 3 times (max 3): step
// build: exit code 1"). Any other error of body, and nil, Label returns as it is. Labels
// nest: a GotoError for an enclosing label passes through the inner ones; an inner label
// shadows an outer one of the same name. A GotoError that reaches the run with no label
// to catch it fails the run, naming the label.
//
// The YAML format's goto maps onto Label: a goto target is the label around the nodes
// from that target on.
func (c *Context) Label(name string, body func(*Context) error, opts ...LabelOption) error {
	o := labelOptions{maxVisits: DefaultMaxVisits}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	switch {
	case strings.TrimSpace(name) == "":
		return newTypedError("label: the name is empty", ErrorInvalidStep, nil)
	case body == nil:
		return newTypedError(fmt.Sprintf("label %s: the body is nil", name), ErrorInvalidStep, nil)
	case o.maxVisits < 1 || o.maxVisits > MaxLabelVisits:
		return newTypedError(fmt.Sprintf("label %s: MaxVisits %d: want 1 to %d", name, o.maxVisits, MaxLabelVisits), ErrorInvalidStep, nil)
	}
	frame := &labelFrame{name: name, max: o.maxVisits, parent: c.labels}
	bc := *c
	bc.labels = frame
	rec := labelRecord(c.run.state, c.scope, name)
	for {
		frame.visits++
		r := &c.run.state.Labels[rec]
		r.Visits, r.MaxVisits = frame.visits, frame.max
		c.run.publish()
		err := body(&bc)
		var ge *GotoError
		if err == nil || !errors.As(err, &ge) || ge.Label != name || !ge.pending() {
			return err
		}
		if frame.visits >= frame.max {
			return &GotoError{Label: name, Step: ge.Step, Err: ge.Err, Visits: frame.visits, MaxVisits: frame.max}
		}
		if reentries(c.run.state) >= MaxRunReentries {
			return &GotoError{Label: name, Step: ge.Step, Err: ge.Err, Visits: frame.visits, MaxVisits: frame.max, runLimit: true}
		}
		r = &c.run.state.Labels[rec]
		r.Reentries++
		r.LastStep = ge.Step
		c.Logger().Info("goto: re-entering label", "label", name, "step", ge.Step, "visit", frame.visits+1, "max", frame.max)
	}
}

// labelRecord is the index of the record of the label name in scope, appended if new.
func labelRecord(s *runs.State, scope, name string) int {
	for i, l := range s.Labels {
		if l.Name == name && l.Branch == scope {
			return i
		}
	}
	s.Labels = append(s.Labels, runs.Label{Name: name, Branch: scope})
	return len(s.Labels) - 1
}

// reentries counts the run's re-entries of labels.
func reentries(s *runs.State) int {
	n := 0
	for _, l := range s.Labels {
		n += l.Reentries
	}
	return n
}
