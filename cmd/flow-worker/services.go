package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gateflow/gateflow/service"
)

// serviceHelp is the help of --service (flag shows the back-quoted part as its argument).
const serviceHelp = "declare a service that steps use (a definition's service: NAME, or an HTTP step's host or an\n" +
	"agent step's provider of that name), with `NAME[=KEY:VALUE,...]` (repeatable):\n" +
	"  rate:N        N steps a second, across all the workers of the task queue\n" +
	"  concurrent:N  N steps at once on this worker\n" +
	"  and a circuit breaker per worker (any of these, or just breaker for the defaults):\n" +
	"  failures:N    open after N failures in a row (default 5, unless ratio is given)\n" +
	"  ratio:R min:N open when the share R (0..1] of at least N steps (default 10) failed\n" +
	"  interval:D    forget the counts every D (default: never)\n" +
	"  open:D        stay open D before probing (default 30s)\n" +
	"  probes:N      steps that probe while half-open (default 1)\n" +
	"e.g. --service 'github=rate:5,concurrent:2,failures:5,open:30s'"

// serviceKeys are the keys of a --service value, in the order the help gives them.
var serviceKeys = []string{"rate", "concurrent", "failures", "ratio", "min", "interval", "open", "probes", "breaker"}

// serviceFlags collects --service NAME[=KEY:VALUE,...] (repeatable).
type serviceFlags []service.Def

func (s *serviceFlags) String() string {
	if s == nil {
		return ""
	}
	names := make([]string, 0, len(*s))
	for _, d := range *s {
		names = append(names, d.Name)
	}
	return strings.Join(names, ",")
}

func (s *serviceFlags) Set(v string) error {
	d, err := parseService(v)
	if err != nil {
		return err
	}
	for _, o := range *s {
		if o.Name == d.Name {
			return fmt.Errorf("service %q is declared twice", d.Name)
		}
	}
	*s = append(*s, d)
	return nil
}

// parseService parses a --service value: NAME, or NAME=KEY:VALUE,... (see serviceHelp).
// Any breaker key gives the service a breaker; the worker checks the name's characters.
func parseService(v string) (service.Def, error) {
	name, spec, hasSpec := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if name == "" {
		return service.Def{}, fmt.Errorf("want NAME[=KEY:VALUE,...], the name is empty in %q", v)
	}
	var opts service.Options
	if !hasSpec {
		return service.Declare(name, opts), nil
	}
	if strings.TrimSpace(spec) == "" {
		return service.Def{}, fmt.Errorf("service %s: nothing after '=' (want KEY:VALUE,... or just %s)", name, name)
	}
	var b service.BreakerOptions
	breaker := false
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		key, val, hasVal := strings.Cut(part, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch {
		case part == "":
			return service.Def{}, fmt.Errorf("service %s: an empty option in %q", name, spec)
		case !slices.Contains(serviceKeys, key):
			return service.Def{}, fmt.Errorf("service %s: unknown option %q (want %s)", name, key, strings.Join(serviceKeys, ", "))
		case seen[key]:
			return service.Def{}, fmt.Errorf("service %s: %s is given twice", name, key)
		case key == "breaker" && hasVal:
			return service.Def{}, fmt.Errorf("service %s: breaker takes no value (got %q); set failures, ratio, open... instead", name, part)
		case key != "breaker" && val == "":
			return service.Def{}, fmt.Errorf("service %s: %s needs a value (%s:VALUE)", name, key, key)
		}
		seen[key] = true
		if key == "breaker" {
			breaker = true
			continue
		}
		var err error
		switch key {
		case "rate":
			opts.RatePerSecond, err = parseRate(val)
		case "concurrent":
			opts.MaxConcurrent, err = parseInt(val)
		case "failures":
			b.ConsecutiveFailures, err = parseUint32(val)
		case "ratio":
			b.FailureRatio, err = parseRatio(val)
		case "min":
			b.MinRequests, err = parseUint32(val)
		case "interval":
			b.Interval, err = parseDuration(val)
		case "open":
			b.OpenTimeout, err = parseDuration(val)
		case "probes":
			b.HalfOpenProbes, err = parseUint32(val)
		}
		if err != nil {
			return service.Def{}, fmt.Errorf("service %s: %s %q: %w", name, key, val, err)
		}
		if key != "rate" && key != "concurrent" {
			breaker = true
		}
	}
	if seen["min"] && !seen["ratio"] {
		return service.Def{}, fmt.Errorf("service %s: min counts steps for ratio, which is not given", name)
	}
	if breaker {
		opts.Breaker = &b
	}
	return service.Declare(name, opts), nil
}

// parseRate is a rate per second above 0; "5/s" reads as 5.
func parseRate(v string) (float64, error) {
	r, err := strconv.ParseFloat(strings.TrimSuffix(v, "/s"), 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, fmt.Errorf("not a number of steps per second")
	}
	if r <= 0 {
		return 0, fmt.Errorf("the rate must be above 0 (leave rate out for no limit)")
	}
	return r, nil
}

// parseCount is a whole number from 1 to most.
func parseCount(v string, most int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("not a whole number")
	}
	if err != nil || n < 1 || n > most {
		return 0, fmt.Errorf("must be from 1 to %d", most)
	}
	return n, nil
}

func parseInt(v string) (int, error) {
	n, err := parseCount(v, math.MaxInt32)
	return int(n), err
}

func parseUint32(v string) (uint32, error) {
	n, err := parseCount(v, math.MaxUint32)
	return uint32(n), err
}

// parseRatio is a share of failures, above 0 and at most 1.
func parseRatio(v string) (float64, error) {
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(r) {
		return 0, fmt.Errorf("not a number")
	}
	if r <= 0 || r > 1 {
		return 0, fmt.Errorf("a share of failures is above 0 and at most 1 (0.5: half)")
	}
	return r, nil
}

// parseDuration is a Go duration above 0 (30s, 1m30s).
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("not a duration (like 30s or 1m)")
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be above 0")
	}
	return d, nil
}

// describeService is the banner's line of a declared service: what --service gave.
func describeService(d service.Def) string {
	var parts []string
	o := d.Options
	if o.RatePerSecond > 0 {
		parts = append(parts, strconv.FormatFloat(o.RatePerSecond, 'g', -1, 64)+"/s")
	}
	if o.MaxConcurrent > 0 {
		parts = append(parts, fmt.Sprintf("%d at once", o.MaxConcurrent))
	}
	if b := o.Breaker; b != nil {
		var bp []string
		add := func(k string, v any, set bool) {
			if set {
				bp = append(bp, fmt.Sprintf("%s %v", k, v))
			}
		}
		add("failures", b.ConsecutiveFailures, b.ConsecutiveFailures > 0)
		add("ratio", b.FailureRatio, b.FailureRatio > 0)
		add("min", b.MinRequests, b.MinRequests > 0)
		add("interval", b.Interval, b.Interval > 0)
		add("open", b.OpenTimeout, b.OpenTimeout > 0)
		add("probes", b.HalfOpenProbes, b.HalfOpenProbes > 0)
		if len(bp) == 0 {
			bp = []string{"defaults"}
		}
		parts = append(parts, "breaker: "+strings.Join(bp, " "))
	}
	if len(parts) == 0 {
		return d.Name
	}
	return d.Name + " (" + strings.Join(parts, ", ") + ")"
}
