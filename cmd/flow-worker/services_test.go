package main

import (
	"io"
	"testing"
	"time"

	"github.com/gateflow/gateflow/service"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseService(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want service.Def
		err  string
	}{
		{in: "github", want: service.Declare("github", service.Options{})},
		{in: " api.github.com ", want: service.Declare("api.github.com", service.Options{})},
		{in: "github=rate:5,concurrent:2", want: service.Declare("github", service.Options{RatePerSecond: 5, MaxConcurrent: 2})},
		{in: "github=rate:0.5/s", want: service.Declare("github", service.Options{RatePerSecond: 0.5})},
		{in: "github=rate:5, concurrent:2, failures:5, open:30s", want: service.Declare("github", service.Options{
			RatePerSecond: 5, MaxConcurrent: 2, Breaker: &service.BreakerOptions{ConsecutiveFailures: 5, OpenTimeout: 30 * time.Second}})},
		{in: "openai=breaker", want: service.Declare("openai", service.Options{Breaker: &service.BreakerOptions{}})},
		{in: "s=ratio:0.5,min:20,interval:1m,probes:3", want: service.Declare("s", service.Options{Breaker: &service.BreakerOptions{
			FailureRatio: 0.5, MinRequests: 20, Interval: time.Minute, HalfOpenProbes: 3}})},
		{in: "s=open:2s,breaker", want: service.Declare("s", service.Options{Breaker: &service.BreakerOptions{OpenTimeout: 2 * time.Second}})},

		{in: "", err: `want NAME[=KEY:VALUE,...], the name is empty in ""`},
		{in: "=rate:5", err: `the name is empty in "=rate:5"`},
		{in: "github=", err: "service github: nothing after '='"},
		{in: "github=rate:5,", err: `service github: an empty option in "rate:5,"`},
		{in: "github=speed:5", err: `service github: unknown option "speed" (want rate, concurrent, failures, ratio, min, interval, open, probes, breaker)`},
		{in: "github=rate", err: "service github: rate needs a value (rate:VALUE)"},
		{in: "github=rate:", err: "service github: rate needs a value (rate:VALUE)"},
		{in: "github=rate:1,rate:2", err: "service github: rate is given twice"},
		{in: "github=rate:fast", err: `service github: rate "fast": not a number of steps per second`},
		{in: "github=rate:0", err: `service github: rate "0": the rate must be above 0 (leave rate out for no limit)`},
		{in: "github=rate:-1", err: `rate "-1": the rate must be above 0`},
		{in: "github=rate:NaN", err: `rate "NaN": not a number`},
		{in: "github=rate:Inf", err: `rate "Inf": not a number`},
		{in: "github=concurrent:1.5", err: `service github: concurrent "1.5": not a whole number`},
		{in: "github=concurrent:0", err: `service github: concurrent "0": must be from 1 to 2147483647`},
		{in: "github=concurrent:99999999999999999999", err: `concurrent "99999999999999999999": must be from 1 to 2147483647`},
		{in: "github=failures:-2", err: `service github: failures "-2": must be from 1 to 4294967295`},
		{in: "github=ratio:2", err: `service github: ratio "2": a share of failures is above 0 and at most 1 (0.5: half)`},
		{in: "github=ratio:half", err: `service github: ratio "half": not a number`},
		{in: "github=min:10", err: "service github: min counts steps for ratio, which is not given"},
		{in: "github=open:30", err: `service github: open "30": not a duration (like 30s or 1m)`},
		{in: "github=open:-1s", err: `service github: open "-1s": must be above 0`},
		{in: "github=interval:0s", err: `service github: interval "0s": must be above 0`},
		{in: "github=breaker:yes", err: `service github: breaker takes no value (got "breaker:yes")`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseService(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestServiceFlagIsRepeatable(t *testing.T) {
	cfg, err := parse([]string{"--service", "github=rate:5,concurrent:2", "--service", "openai=failures:3,open:10s"}, io.Discard)
	require.NoError(t, err)
	require.Len(t, cfg.services, 2)
	assert.Equal(t, "github", cfg.services[0].Name)
	assert.Equal(t, "openai", cfg.services[1].Name)
	assert.Equal(t, "github (5/s, 2 at once)", describeService(cfg.services[0]))
	assert.Equal(t, "openai (breaker: failures 3 open 10s)", describeService(cfg.services[1]))
	assert.Equal(t, "s (breaker: defaults)", describeService(service.Declare("s", service.Options{Breaker: &service.BreakerOptions{}})))
	assert.Equal(t, "s", describeService(service.Declare("s", service.Options{})))

	_, err = parse([]string{"--service", "github", "--service", "github=rate:1"}, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid value "github=rate:1" for flag -service: service "github" is declared twice`)
}
