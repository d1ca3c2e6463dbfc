package flow

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/gateflow/gateflow/service"

	"github.com/gateflow/gateflow/activities"
	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/internal/protocol"
)

// UseService sends the step to the service name (declared in WorkerOptions.Services): its
// rate limit, concurrency limit and breaker apply to the step.
func UseService(name string) StepOption {
	return func(o *stepOptions) { o.service = name }
}

var serviceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

// maxServiceName bounds a service's name (it is part of a task queue name).
const maxServiceName = 200

// checkServices reports every mistake in declared services.
func checkServices(defs []service.Def) error {
	var errs []error
	seen := map[string]bool{}
	for i, d := range defs {
		where := fmt.Sprintf("service %d (%q)", i, d.Name)
		switch {
		case d.Name == "":
			errs = append(errs, fmt.Errorf("service %d: the name is empty", i))
		case len(d.Name) > maxServiceName || !serviceName.MatchString(d.Name):
			errs = append(errs, fmt.Errorf("%s: a name is letters, digits, '.', '_', ':' and '-' (at most %d), starting with a letter or digit", where, maxServiceName))
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("%s is declared twice", where))
		}
		seen[d.Name] = true
		o := d.Options
		if o.RatePerSecond < 0 || math.IsNaN(o.RatePerSecond) || math.IsInf(o.RatePerSecond, 0) {
			errs = append(errs, fmt.Errorf("%s: RatePerSecond %v is not a rate (>= 0)", where, o.RatePerSecond))
		}
		if o.MaxConcurrent < 0 {
			errs = append(errs, fmt.Errorf("%s: MaxConcurrent %d is negative", where, o.MaxConcurrent))
		}
		if b := o.Breaker; b != nil {
			if b.FailureRatio < 0 || b.FailureRatio > 1 || math.IsNaN(b.FailureRatio) {
				errs = append(errs, fmt.Errorf("%s: Breaker.FailureRatio %v is not in 0..1", where, b.FailureRatio))
			}
			if b.Interval < 0 || b.OpenTimeout < 0 {
				errs = append(errs, fmt.Errorf("%s: Breaker.Interval and OpenTimeout must not be negative", where))
			}
		}
	}
	return errors.Join(errs...)
}

// serviceNames are the names of the declared services, sorted.
func serviceNames(defs []service.Def) []string {
	names := make([]string, 0, len(defs))
	for _, d := range defs {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

// stepService is the service a step uses ("" for none), by the rule of Services; a named
// service the worker does not declare is an error.
func (rt *runner) stepService(cl call) (string, error) {
	if name := cl.opts.service; name != "" {
		if !slices.Contains(rt.setup.services, name) {
			known := "none"
			if len(rt.setup.services) > 0 {
				known = strings.Join(rt.setup.services, ", ")
			}
			return "", fmt.Errorf("step %s: service %q is not declared on this worker (WorkerOptions.Services: %s)", cl.name, name, known)
		}
		return name, nil
	}
	if len(rt.setup.services) == 0 || len(cl.args) == 0 {
		return "", nil
	}
	var candidates []string
	switch s := cl.args[0].(type) {
	case activities.HTTP:
		if u, err := url.Parse(s.URL); err == nil {
			candidates = []string{u.Host, u.Hostname()}
		}
	case activities.Agent:
		p := s.Provider
		if p == "" {
			p = llm.ProviderForModel(s.Model)
		}
		candidates = []string{p}
	}
	for _, n := range candidates {
		if n != "" && slices.Contains(rt.setup.services, n) {
			return n, nil
		}
	}
	return "", nil
}

// checkService is the error of a step naming an undeclared service (run_steps.go).
func (c *Context) checkService(cl call) error {
	_, err := c.run.stepService(cl)
	return err
}

// serviceQueue is the task queue of the step's activity: its service's, or "" (the run's).
func (c *Context) serviceQueue(cl call) string {
	name, err := c.run.stepService(cl)
	if err != nil || name == "" {
		return ""
	}
	return protocol.ServiceQueue(c.run.setup.baseQueue, name)
}
