package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gateflow/gateflow/quality"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/internal/display"
)

// This file is the quality gate's pure part: reading a score out of a step's output and
// checking the gate's settings. Nothing here touches Temporal; quality_score_test.go
// table-tests it.

// defaultQualityField is the field a quality gate reads when Quality.Field is empty and
// the source is not itself a number.
const defaultQualityField = "score"

// checkQuality reports what is wrong with a quality gate's settings: a threshold outside
// 0–100, an unknown OnFail, or a field path with an empty segment.
func checkQuality(q quality.Gate) error {
	if q.Threshold < 0 || q.Threshold > 100 || q.Threshold != q.Threshold {
		return fmt.Errorf("threshold %v is outside 0–100", q.Threshold)
	}
	switch q.OnFail {
	case "", quality.Fail, quality.Continue:
	default:
		return fmt.Errorf("on fail %q: want %q or %q", q.OnFail, quality.Fail, quality.Continue)
	}
	if q.Field != "" {
		for _, seg := range strings.Split(q.Field, ".") {
			if strings.TrimSpace(seg) == "" {
				return fmt.Errorf("field %q has an empty segment", q.Field)
			}
		}
	}
	return nil
}

// qualitySourceJSON turns a quality gate's source into JSON: an AgentResult's parsed JSON
// (or its text, when that is JSON), a json.RawMessage, []byte or string holding JSON, and
// any other value marshalled.
func qualitySourceJSON(source any) ([]byte, error) {
	switch s := source.(type) {
	case nil:
		return nil, errors.New("the source is nil")
	case activities.AgentResult:
		return agentResultJSON(s)
	case *activities.AgentResult:
		if s == nil {
			return nil, errors.New("the source is a nil *activities.AgentResult")
		}
		return agentResultJSON(*s)
	case json.RawMessage:
		return jsonText(s, "the source")
	case []byte:
		return jsonText(s, "the source")
	case string:
		return jsonText([]byte(s), "the source")
	}
	b, err := json.Marshal(source)
	if err != nil {
		return nil, fmt.Errorf("the source (%T) does not marshal to JSON: %w", source, err)
	}
	return b, nil
}

// agentResultJSON is an agent answer as JSON: AgentResult.JSON when the step had a
// ResponseSchema, else its text when that is JSON.
func agentResultJSON(r activities.AgentResult) ([]byte, error) {
	if len(bytes.TrimSpace(r.JSON)) > 0 {
		return r.JSON, nil
	}
	b, err := jsonText([]byte(r.Text), "the agent's answer")
	if err != nil {
		return nil, fmt.Errorf("%w (give the agent step a ResponseSchema)", err)
	}
	return b, nil
}

func jsonText(b []byte, what string) ([]byte, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil, fmt.Errorf("%s is empty, not JSON", what)
	}
	if !json.Valid(t) {
		return nil, fmt.Errorf("%s is not JSON: %s", what, display.Preview(display.OneLine(string(t)), 80))
	}
	return t, nil
}

// qualityScore reads the score at the dotted path field ("score", "review.score",
// "reviews.0.score": a number segment indexes an array; keys match exactly, else ignoring
// case) of source (see qualitySourceJSON).
// An empty field reads the source itself when it is a number, else its "score" field. The
// score must be a JSON number from 0 to 100, or a boolean (true is 100, false is 0). It
// returns the score and the field it read.
func qualityScore(source any, field string) (float64, string, error) {
	raw, err := qualitySourceJSON(source)
	if err != nil {
		return 0, field, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return 0, field, fmt.Errorf("read the source: %w", err)
	}
	if field == "" {
		if _, isNumber := v.(json.Number); !isNumber {
			field = defaultQualityField
		}
	}
	at := v
	if field != "" {
		for i, seg := range strings.Split(field, ".") {
			next, ok := qualityChild(at, seg)
			if !ok {
				where := "the source"
				if i > 0 {
					where = strings.Join(strings.Split(field, ".")[:i], ".")
				}
				return 0, field, fmt.Errorf("field %q is missing (%s is %s)", field, where, qualityKind(at))
			}
			at = next
		}
	}
	name := field
	if name == "" {
		name = "(the source)"
	}
	switch s := at.(type) {
	case bool:
		if s {
			return 100, field, nil
		}
		return 0, field, nil
	case json.Number:
		f, err := strconv.ParseFloat(s.String(), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range reads as ±Inf
			return 0, field, fmt.Errorf("field %s is %s, not a number from 0 to 100", name, s)
		}
		if f < 0 || f > 100 {
			return 0, field, fmt.Errorf("field %s is %s, outside 0–100", name, s)
		}
		return f, field, nil
	}
	return 0, field, fmt.Errorf("field %s is %s, not a number from 0 to 100", name, qualityValue(at))
}

// qualityChild is the member seg of an object, or the element seg of an array.
func qualityChild(v any, seg string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		if next, ok := c[seg]; ok {
			return next, true
		}
		// As encoding/json matches object keys to struct fields: a key that differs only in
		// case (a struct marshalled without tags has "Score"), the first in sorted order.
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if strings.EqualFold(k, seg) {
				return c[k], true
			}
		}
		return nil, false
	case []any:
		n, err := strconv.Atoi(seg)
		if err != nil || n < 0 || n >= len(c) {
			return nil, false
		}
		return c[n], true
	}
	return nil, false
}

// qualityKind says what a JSON value is, for an error about a missing field.
func qualityKind(v any) string {
	switch c := v.(type) {
	case map[string]any:
		if len(c) == 0 {
			return "an empty object"
		}
		return "an object"
	case []any:
		return fmt.Sprintf("an array of %d", len(c))
	case nil:
		return "null"
	}
	return qualityValue(v)
}

// qualityValue is a JSON value as it reads in an error: compact, at most 60 runes.
func qualityValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return display.Preview(string(b), 60)
}
