package cronspec

import (
	"fmt"
	"strings"

	"github.com/robfig/cron/v3"
)

// Parse reads a standard cron expression ("0 9 * * 1-5"), a descriptor ("@daily",
// "@every 10m"), optionally after a time zone ("CRON_TZ=Europe/Paris 0 9 * * *"), as
// cron.ParseStandard does. Unlike it, Parse refuses a time zone prefix with no expression
// after it ("TZ=Europe/Paris"), which makes cron.ParseStandard panic, and any other panic
// of the parser comes back as an error.
func Parse(spec string) (s cron.Schedule, err error) {
	for _, prefix := range []string{"TZ=", "CRON_TZ="} {
		if strings.HasPrefix(spec, prefix) && !strings.Contains(spec, " ") {
			return nil, fmt.Errorf("time zone %q has no cron expression after it (want %s<zone> <expression>)", spec, prefix)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cannot parse %q: %v", spec, r)
		}
	}()
	return cron.ParseStandard(spec)
}
