package runs

import "encoding/json"

// A run's state is kept in its Memo and returned by its Query, and both grow with every
// step, so a step is encoded small: fields at their zero value are left out (they decode
// to the same zero), and so are the fields most steps hold at their usual value, which
// decoding puts back: activity_id when it is the step's default ID (its name, after its
// branch: what beginStep in package flow gives the first use of a name), attempt and
// run_attempt when they are 1. Field names are those of older versions, which wrote every
// field; State and Step decode what they wrote.

// stepJSON is Step as it is encoded, with the fields left out at their usual value.
type stepJSON struct {
	stepFields
	ActivityID *string `json:"activity_id,omitempty"`
	Attempt    *int    `json:"attempt,omitempty"`
	RunAttempt *int    `json:"run_attempt,omitempty"`
}

// stepFields is Step without its methods (the fields stepJSON does not shadow are
// encoded as they are).
type stepFields Step

// defaultActivityID is the activity ID of the first step of a name in its branch.
func (r Step) defaultActivityID() string {
	if r.Branch == "" {
		return r.Name
	}
	return r.Branch + "/" + r.Name
}

// MarshalJSON encodes the step, leaving out activity_id, attempt and run_attempt at their
// usual values.
func (r Step) MarshalJSON() ([]byte, error) {
	j := stepJSON{stepFields: stepFields(r)}
	if r.ActivityID != r.defaultActivityID() {
		j.ActivityID = &r.ActivityID
	}
	if r.Attempt != 1 {
		j.Attempt = &r.Attempt
	}
	if r.RunAttempt != 1 {
		j.RunAttempt = &r.RunAttempt
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes a step as this version or an older one encoded it.
func (r *Step) UnmarshalJSON(b []byte) error {
	var j stepJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Step(j.stepFields)
	r.ActivityID, r.Attempt, r.RunAttempt = r.defaultActivityID(), 1, 1
	if j.ActivityID != nil {
		r.ActivityID = *j.ActivityID
	}
	if j.Attempt != nil {
		r.Attempt = *j.Attempt
	}
	if j.RunAttempt != nil {
		r.RunAttempt = *j.RunAttempt
	}
	return nil
}
