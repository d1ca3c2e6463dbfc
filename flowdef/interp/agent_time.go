package interp

import (
	"fmt"
	"time"

	"github.com/gateflow/gateflow/flowdef"
)

// loopTime is an agent loop's rendered max_loop_time: zero when empty, else a duration
// longer than zero (flowdef validates the same).
func loopTime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := flowdef.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("with.max_loop_time: %w", err)
	}
	return d, nil
}
