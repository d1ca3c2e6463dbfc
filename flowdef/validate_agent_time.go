package flowdef

// loopTime checks an agent loop's max_loop_time: a duration longer than zero
// (ParseDuration refuses zero and negative ones) or a template, at its line:col.
func (w withCheck) loopTime(v any) {
	const path = "with.max_loop_time"
	switch t := v.(type) {
	case nil:
	case string:
		if isTemplate(t) {
			return
		}
		if _, err := ParseDuration(t); err != nil {
			w.add(path, hintDuration, "%v", err)
		}
	default:
		w.add(path, hintDuration, "want a duration string, got %s", yamlKind(v))
	}
}
