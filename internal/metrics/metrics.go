// Package metrics is a Temporal SDK metrics handler that keeps counters, gauges and timers
// in memory and serves them in the Prometheus text format. The SDK's own metrics and
// gateflow's (emitted by the run wrapper through workflow.GetMetricsHandler, so replays do
// not count twice) go through it; flow-worker serves it on /metrics.
package metrics

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	sdkmetrics "go.temporal.io/sdk/client"
)

// Registry holds the series.
type Registry struct {
	mu       sync.Mutex
	counters map[string]int64
	gauges   map[string]float64
	timers   map[string]*timerValue
}

type timerValue struct {
	count int64
	sum   float64
}

// NewRegistry creates an empty registry.
func NewRegistry() *Registry {
	return &Registry{counters: map[string]int64{}, gauges: map[string]float64{}, timers: map[string]*timerValue{}}
}

// Handler returns the SDK metrics handler writing into the registry.
func (r *Registry) Handler() sdkmetrics.MetricsHandler { return handler{r: r} }

var invalid = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// key is a series: the metric name and its labels, sorted.
func key(name string, tags map[string]string) string {
	name = invalid.ReplaceAllString(name, "_")
	if len(tags) == 0 {
		return name
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(tags[k])
		parts = append(parts, fmt.Sprintf(`%s="%s"`, invalid.ReplaceAllString(k, "_"), v))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

type handler struct {
	r    *Registry
	tags map[string]string
}

func (h handler) WithTags(tags map[string]string) sdkmetrics.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	return handler{r: h.r, tags: merged}
}

func (h handler) Counter(name string) sdkmetrics.MetricsCounter {
	return counter{r: h.r, key: key(name, h.tags)}
}

func (h handler) Gauge(name string) sdkmetrics.MetricsGauge {
	return gauge{r: h.r, key: key(name, h.tags)}
}

func (h handler) Timer(name string) sdkmetrics.MetricsTimer {
	return timer{r: h.r, key: key(name, h.tags)}
}

type counter struct {
	r   *Registry
	key string
}

func (c counter) Inc(n int64) {
	c.r.mu.Lock()
	c.r.counters[c.key] += n
	c.r.mu.Unlock()
}

type gauge struct {
	r   *Registry
	key string
}

func (g gauge) Update(v float64) {
	g.r.mu.Lock()
	g.r.gauges[g.key] = v
	g.r.mu.Unlock()
}

type timer struct {
	r   *Registry
	key string
}

func (t timer) Record(d time.Duration) {
	t.r.mu.Lock()
	v := t.r.timers[t.key]
	if v == nil {
		v = &timerValue{}
		t.r.timers[t.key] = v
	}
	v.count++
	v.sum += d.Seconds()
	t.r.mu.Unlock()
}

// Write writes every series in the Prometheus text format, sorted.
func (r *Registry) Write(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for k, v := range r.counters {
		lines = append(lines, fmt.Sprintf("%s %d", k, v))
	}
	for k, v := range r.gauges {
		lines = append(lines, fmt.Sprintf("%s %g", k, v))
	}
	for k, v := range r.timers {
		name, labels, _ := strings.Cut(k, "{")
		if labels != "" {
			labels = "{" + labels
		}
		lines = append(lines, fmt.Sprintf("%s_seconds_count%s %d", name, labels, v.count))
		lines = append(lines, fmt.Sprintf("%s_seconds_sum%s %g", name, labels, v.sum))
	}
	lines = append(lines, r.pendingGates()...)
	sort.Strings(lines)
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

var workflowLabel = regexp.MustCompile(`workflow="([^"]*)"`)

// pendingGates derives gateflow_pending_gates{workflow} from the gates opened and decided.
func (r *Registry) pendingGates() []string {
	pending := map[string]int64{}
	for k, v := range r.counters {
		wf := ""
		if m := workflowLabel.FindStringSubmatch(k); m != nil {
			wf = m[1]
		}
		switch {
		case strings.HasPrefix(k, "gateflow_gates_opened_total"):
			pending[wf] += v
		case strings.HasPrefix(k, "gateflow_gates_decided_total"):
			pending[wf] -= v
		}
	}
	var out []string
	for wf, n := range pending {
		out = append(out, fmt.Sprintf("%s %d", key("gateflow_pending_gates", map[string]string{"workflow": wf}), n))
	}
	return out
}

// ServeHTTP serves the registry on /metrics.
func (r *Registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_ = r.Write(w)
}
