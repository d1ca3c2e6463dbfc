package flow

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gateflow/gateflow/quality"

	"github.com/gateflow/gateflow/runs"

	"github.com/gateflow/gateflow/events"
)

// QualityGate checks the score in source against q.Threshold as the step name, of kind
// quality_gate: the step passes when the score is at least the threshold. source is the
// structured output of an earlier step or any value: an activities.AgentResult (its JSON,
// which a ResponseSchema gives it, or else its text when that is JSON), a json.RawMessage,
// a []byte or string holding JSON, or a map or struct (marshalled to JSON). q.Field is the
// dotted path of the score in it (see quality.Gate). The score must be a number from 0 to 100;
// a boolean counts as 100 (true) or 0 (false).
//
// The gate runs in the workflow itself (no activity, no cost) and is recorded like any
// step, with runs.Step.Quality holding the score, the threshold and whether it passed;
// the returned runs.Quality is the same. A score below the threshold fails the step with
// an application error of type ErrorQualityGate inside the *StepError, or with
// quality.Continue returns an *AllowedFailure and the run goes on. Settings that are wrong
// (a threshold outside 0–100, an unknown OnFail) and a score that cannot be read (a missing
// field, a value that is not a number, a number outside 0–100) fail the step whatever
// OnFail says, with an error naming the field and the value.
func (c *Context) QualityGate(name string, source any, q quality.Gate) (runs.Quality, error) {
	if err := c.holdWhilePaused(false); err != nil { // run_pause.go: no new step while paused
		return runs.Quality{}, &StepError{Step: name, Kind: runs.KindQuality, Err: err}
	}
	s := c.begin(name, runs.KindQuality)
	rec := runs.Quality{Threshold: q.Threshold, Field: q.Field, OnFail: string(q.OnFail)}
	if rec.OnFail == "" {
		rec.OnFail = string(quality.Fail)
	}
	fail := func(err error) (runs.Quality, error) {
		serr := s.fail(s.began, runs.StepFailed, err)
		c.run.emit(c.wctx, events.StepFailed, name, string(runs.StepFailed), err.Error(), map[string]any{"kind": runs.KindQuality})
		s.failed()
		return rec, serr
	}
	if strings.TrimSpace(name) == "" {
		return fail(errors.New("step name is empty"))
	}
	if err := checkQuality(q); err != nil {
		return fail(fmt.Errorf("quality gate %s: %w", name, err))
	}
	if err := c.countStep(name); err != nil { // run_limits.go: the MaxSteps guard
		return fail(err)
	}
	if s.planned("quality gate: " + qualityWant(q)) {
		return rec, nil
	}
	score, field, err := qualityScore(source, q.Field)
	rec.Field = field
	if err != nil {
		return fail(fmt.Errorf("quality gate %s: %w", name, err))
	}
	rec.Score = score
	rec.Passed = score >= q.Threshold
	s.rec().Quality = &rec
	summary := fmt.Sprintf("score %s, threshold %s", formatScore(score), formatScore(q.Threshold))
	if rec.Passed {
		s.end(s.began, runs.StepCompleted, "", summary+": passed")
		c.run.emit(c.wctx, events.StepCompleted, name, string(runs.StepCompleted), "",
			map[string]any{"kind": runs.KindQuality, "score": score, "threshold": q.Threshold})
		return rec, nil
	}
	msg := fmt.Sprintf("quality gate %s: %s is below the threshold %s", name, scoreName(field, score), formatScore(q.Threshold))
	serr := s.err(newTypedError(msg, ErrorQualityGate, nil))
	s.close(s.began, runs.StepFailed, 0, msg, summary+": failed", nil)
	var out error = serr
	if rec.OnFail == string(quality.Continue) {
		out = s.allowFailure(serr)
	}
	c.run.publish()
	c.run.emit(c.wctx, events.StepFailed, name, string(runs.StepFailed), msg,
		map[string]any{"kind": runs.KindQuality, "score": score, "threshold": q.Threshold, "on_fail": rec.OnFail})
	s.failed()
	return rec, out
}

// qualityWant is what a planned gate would check: "score >= 80 at review.score".
func qualityWant(q quality.Gate) string {
	s := "score >= " + formatScore(q.Threshold)
	if q.Field != "" {
		s += " at " + q.Field
	}
	return s
}

// scoreName is "score 79 (at review.score)", or "score 79" for a bare number.
func scoreName(field string, score float64) string {
	if field == "" {
		return "score " + formatScore(score)
	}
	return "score " + formatScore(score) + " (at " + field + ")"
}

// formatScore writes a score as short as it reads exactly: 80, 79.5.
func formatScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
