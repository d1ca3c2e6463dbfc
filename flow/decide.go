package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/signals"
	"github.com/shopspring/decimal"
)

// DecisionRequest is what a decision (Decide) offers and who makes it: an AI agent when
// AssignTo is empty, else the people it names.
type DecisionRequest struct {
	// Options are the choices, at least one, each non-blank and different from the others
	// (compared exactly). The decision returns one of them.
	Options []string `json:"options"`
	// Prompt is the question, for the agent or shown to people; required.
	Prompt string `json:"prompt"`
	// Model, System, Provider and MaxBudgetUSD configure the agent that decides when
	// AssignTo is empty (see activities.Agent); Model is then required. They must be empty
	// when people decide.
	Model        string          `json:"model,omitempty"`
	System       string          `json:"system,omitempty"`
	Provider     string          `json:"provider,omitempty"`
	MaxBudgetUSD decimal.Decimal `json:"max_budget_usd"`
	// AssignTo are the users and "group:" names who may decide; empty lets an agent decide.
	AssignTo []string `json:"assign_to,omitempty"`
	// Timeout bounds the decision: how long people have to answer, or one attempt of the
	// agent's call (the step's StepTimeout, when that is not set on the context). Zero means
	// no limit for people and the default step timeout for an agent.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// agentDecider prefixes runs.Decision.By for a decision an agent made.
const agentDecider = "agent:"

// Decide asks for one of req.Options as the step name, of kind decision, and returns it.
//
// Without req.AssignTo an AI agent decides: an agent call (req.Model, req.System,
// req.Provider, req.MaxBudgetUSD) whose ResponseSchema is an object with "choice", one of
// the options (a JSON Schema enum), and "reason", a string. The step is an agent step in
// every other way: it reserves MaxBudgetUSD, its cost and tokens are charged to the run,
// its attempts are retried, and an answer outside the options fails the attempt with
// activities.AgentSchemaErrorType, so the model is asked again. Step options come from
// ctx.With(...).
//
// With req.AssignTo a person decides, through the human input machinery: the run waits
// (awaiting_input) for an answer to the input request name, which is one of the options as
// a JSON string or an object {"choice": "...", "reason": "..."}:
//
//	flowctl input RUN NAME --data '"ship"'
//	flowctl input RUN NAME --data '{"choice":"hold","reason":"tests are red"}'
//
// Answers that are not an option, or come from people not assigned, are refused before
// they reach the run; req.Timeout bounds the wait.
//
// The step record's Decision holds the options, the choice, the reason and who decided.
// A request that is wrong (no options, a blank or repeated option, a blank prompt, an agent
// without a model, agent settings given to people) fails the step before anything is
// dispatched or asked.
func Decide[T ~string](ctx *Context, name string, req DecisionRequest) (T, error) {
	if err := checkDecision(req); err != nil {
		return "", failDecision(ctx, name, req, fmt.Errorf("decision %s: %w", name, err))
	}
	var d decisionAnswer
	var err error
	if len(req.AssignTo) > 0 {
		d, err = decideByPeople(ctx, name, req)
	} else {
		d, err = decideByAgent(ctx, name, req)
	}
	return T(d.Choice), err
}

// failDecision records the step name as a failed decision without asking anyone.
func failDecision(ctx *Context, name string, req DecisionRequest, err error) error {
	s := ctx.begin(name, runs.KindDecision)
	s.rec().Decision = &runs.Decision{Options: req.Options, AssignTo: req.AssignTo}
	return s.refuse(err)
}

// failDecided turns the recorded outcome of the decision step s, which ended with an
// answer that is not a choice, into a failure; allow makes it an allowed failure
// (AllowFailure on the context).
func (c *Context) failDecided(s *step, err error, allow bool) error {
	r := s.rec()
	r.Status, r.Error = runs.StepFailed, err.Error()
	serr := &StepError{Step: r.Name, Kind: runs.KindDecision, Err: err}
	var out error = serr
	if allow {
		out = s.allowFailure(serr)
	}
	c.run.publish()
	s.failed()
	return out
}

// decisionAnswer is what the agent answers and what people may send as an object.
type decisionAnswer struct {
	Choice string `json:"choice"`
	Reason string `json:"reason,omitempty"`
}

func decideByAgent(ctx *Context, name string, req DecisionRequest) (decisionAnswer, error) {
	cl := ctx.builtinCall(name, decisionAgent(req), nil)
	cl.kind = runs.KindDecision
	if cl.opts.timeout == 0 {
		cl.opts.timeout = req.Timeout
	}
	var res activities.AgentResult
	var d decisionAnswer
	var readErr error
	describe := func() outcome {
		o := describeAgent(&res)()
		d, readErr = readDecision(res.JSON, req.Options)
		if readErr == nil {
			o.output = decisionSummary(d, agentDecider+res.Model)
		}
		return o
	}
	p := ctx.dispatch(cl)
	s := ctx.stepAt(p.idx)
	rec := &runs.Decision{Options: req.Options}
	s.rec().Decision = rec
	err := ctx.settle(p, &res, describe)
	if err != nil || p.planned {
		return decisionAnswer{}, err
	}
	if readErr != nil {
		// The schema keeps the choice among the options; an answer that passed it and is
		// still not one (a mocked step, a provider that ignores the schema) fails the step.
		return decisionAnswer{}, ctx.failDecided(s, fmt.Errorf("decision %s: %w", name, readErr), cl.opts.allowFailure)
	}
	rec.Choice, rec.Reason, rec.By = d.Choice, d.Reason, agentDecider+res.Model
	ctx.run.publish()
	return d, nil
}

func decideByPeople(ctx *Context, name string, req DecisionRequest) (decisionAnswer, error) {
	schema, err := decisionInputSchema(req.Options)
	if err != nil {
		return decisionAnswer{}, failDecision(ctx, name, req, fmt.Errorf("decision %s: %w", name, err))
	}
	in := signals.InputRequest{Prompt: decisionPeoplePrompt(req), Schema: schema, Assignees: req.AssignTo, Timeout: req.Timeout}
	var s *step
	rec := &runs.Decision{Options: req.Options, AssignTo: req.AssignTo}
	raw, ans, err := askInput[json.RawMessage](ctx, name, runs.KindDecision, in, func(begun *step) {
		s = begun
		s.rec().Decision = rec
	})
	if err != nil || ans == nil {
		return decisionAnswer{}, err // a plan, or no answer (already recorded)
	}
	d, derr := readDecision(raw, req.Options)
	if derr != nil {
		// The Validator refused such answers already (the request's schema); this keeps the
		// step honest if one got through.
		return decisionAnswer{}, ctx.failDecided(s, fmt.Errorf("decision %s: %w", name, derr), false)
	}
	rec.Choice, rec.Reason, rec.By = d.Choice, d.Reason, ans.By
	s.rec().Output = decisionSummary(d, ans.By)
	ctx.run.publish()
	return d, nil
}

// checkDecision reports what is wrong with a decision request before anything runs.
func checkDecision(req DecisionRequest) error {
	if len(req.Options) == 0 {
		return errors.New("no options: give at least one")
	}
	for i, o := range req.Options {
		if strings.TrimSpace(o) == "" {
			return fmt.Errorf("option %d is blank", i+1)
		}
		if j := slices.Index(req.Options[:i], o); j >= 0 {
			return fmt.Errorf("option %d (%q) repeats option %d", i+1, o, j+1)
		}
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return errors.New("prompt is empty")
	}
	if req.Timeout < 0 {
		return fmt.Errorf("timeout %s is negative", req.Timeout)
	}
	if len(req.AssignTo) == 0 {
		if strings.TrimSpace(req.Model) == "" {
			return errors.New("model is empty: an agent decides when AssignTo is empty")
		}
		return nil
	}
	var agentFields []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"Model", req.Model != ""}, {"System", req.System != ""}, {"Provider", req.Provider != ""}, {"MaxBudgetUSD", !req.MaxBudgetUSD.IsZero()}} {
		if f.set {
			agentFields = append(agentFields, f.name)
		}
	}
	if len(agentFields) > 0 {
		return fmt.Errorf("%s configure the agent that decides without AssignTo; people decide this one (AssignTo %s)",
			strings.Join(agentFields, ", "), strings.Join(req.AssignTo, ", "))
	}
	for i, a := range req.AssignTo {
		if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(a), approval.GroupPrefix)) == "" {
			return fmt.Errorf("assign to: entry %d is blank", i+1)
		}
	}
	return nil
}

// decisionSchema is the JSON Schema of an agent's decision: {"choice": one of options,
// "reason": a string}, choice required.
func decisionSchema(options []string) json.RawMessage {
	b, err := json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"choice": map[string]any{"enum": options},
			"reason": map[string]any{"type": "string"},
		},
		"required": []string{"choice"},
	})
	if err != nil { // strings always marshal
		return nil
	}
	return b
}

// decisionInputSchema is what people may answer: an option as a JSON string, or the
// agent's object.
func decisionInputSchema(options []string) (json.RawMessage, error) {
	var obj map[string]any
	if err := json.Unmarshal(decisionSchema(options), &obj); err != nil {
		return nil, fmt.Errorf("the answer schema: %w", err)
	}
	b, err := json.Marshal(map[string]any{"anyOf": []any{map[string]any{"enum": options}, obj}})
	if err != nil {
		return nil, fmt.Errorf("the answer schema: %w", err)
	}
	return b, nil
}

// decisionAgent is the agent call of a decision an agent makes.
func decisionAgent(req DecisionRequest) activities.Agent {
	return activities.Agent{Prompt: decisionAgentPrompt(req), System: req.System, Model: req.Model, Provider: req.Provider,
		MaxBudgetUSD: req.MaxBudgetUSD, ResponseSchema: decisionSchema(req.Options)}
}

func decisionAgentPrompt(req DecisionRequest) string {
	return req.Prompt + "\n\nChoose exactly one of these options: " + quotedList(req.Options) +
		".\nAnswer with a JSON object: \"choice\" is the option you chose, spelled exactly as above; \"reason\" says why in one sentence."
}

func decisionPeoplePrompt(req DecisionRequest) string {
	return req.Prompt + "\n\nOptions: " + quotedList(req.Options) +
		` (answer with one as a JSON string, or {"choice": "...", "reason": "..."})`
}

func quotedList(options []string) string {
	q := make([]string, len(options))
	for i, o := range options {
		q[i] = strconv.Quote(o)
	}
	return strings.Join(q, ", ")
}

// readDecision reads a decision from raw (an option as a JSON string, or an object with
// "choice" and "reason") and checks that the choice is one of options.
func readDecision(raw json.RawMessage, options []string) (decisionAnswer, error) {
	var d decisionAnswer
	if err := json.Unmarshal(orNull(raw), &d.Choice); err != nil {
		if oerr := json.Unmarshal(orNull(raw), &d); oerr != nil {
			return decisionAnswer{}, fmt.Errorf("the answer %s is neither an option nor {\"choice\", \"reason\"}", display.Preview(string(raw), 80))
		}
	}
	if !slices.Contains(options, d.Choice) {
		return decisionAnswer{}, fmt.Errorf("the choice %q is not one of the options %s", d.Choice, quotedList(options))
	}
	return d, nil
}

// decisionSummary is the step's output: `chose "ship" (by alice): the tests pass`.
func decisionSummary(d decisionAnswer, by string) string {
	s := fmt.Sprintf("chose %q (by %s)", d.Choice, by)
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	return display.Preview(s, 200)
}
