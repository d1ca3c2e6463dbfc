// Command flow-worker serves gateflow flows on a Temporal task queue.
//
// With --dev it runs everything on one machine with no setup: an embedded Temporal server
// (in memory, or a SQLite file given by --db-file), the Temporal Web UI and a worker with
// the example flows, in one process. Without --dev it connects to TEMPORAL_ADDRESS /
// TEMPORAL_NAMESPACE (default localhost:7233 / default).
//
// --flows DIR serves the declarative definitions of DIR besides the Go flows (with --dev,
// examples/flows by default, found in the working directory or next to the binary),
// polling it every --reload-interval (package flowdef/serve) for edited, added and removed
// files, which take effect without a restart; an invalid definition refuses the start,
// with every error (an invalid edit is logged and the last good version stays served). Every flow-worker serves the generic
// flow gateflow.definition that `flowctl start --file` starts.
//
// --service NAME=rate:N,concurrent:N,failures:N,open:D,... (repeatable) declares a service
// (service.Declare) that the definitions' steps name with `service: NAME`: its rate limit,
// shared by all the workers of the task queue, its concurrency limit and circuit breaker on
// this worker.
//
// --mcp name=command… or name=https://… (repeatable) declares an MCP server whose tools
// the steps call (flow.WorkerOptions.MCPServers). With --dev and no --mcp, the example
// server triage-tools is declared when its binary sits next to flow-worker (make build
// puts it in bin/), so the examples' triage agents run.
//
// --provider-rules FILE gives the scripted agent provider's answers (YAML or JSON, see
// llm.LoadScriptRules) and --prices FILE the models' prices, so agent steps run and cost
// what a test or a demo needs without code.
//
// It warns, once per conflict, when other workers poll its task queue whose catalog lists
// flows it does not serve (their tasks would fail here): give each its own --task-queue.
//
// SIGINT or SIGTERM stops it cleanly: the worker stops polling, in-flight steps get
// --stop-timeout to finish, then the server (with --dev) stops. A second signal exits at
// once.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/activities/llm"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/events"
	"github.com/shopspring/decimal"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/examples"
	"github.com/gateflow/gateflow/flow"
	"github.com/gateflow/gateflow/flowdef/interp"
	"github.com/gateflow/gateflow/flowdef/serve"
	"github.com/gateflow/gateflow/internal/blob"
	"github.com/gateflow/gateflow/internal/connect"
	"github.com/gateflow/gateflow/internal/devserver"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/protocol"
)

type config struct {
	dev         bool
	dbFile      string
	port        int
	uiPort      int
	address     string
	namespace   string
	taskQueue   string
	serverLog   string
	stopTimeout time.Duration
	pricesFile  string
	rulesFile   string
	groupsFile  string
	profile     string
	webhooks    []string
	logEvents   bool
	eventsSub   events.Subscription
	metricsAddr string
	logLevel    string
	logFormat   string
	maxCost     string
	quota       string
	wfQuotas    quotaFlags
	services    serviceFlags
	mcp         mcpFlags
	tags        string
	flowsDir    string
	model       string
	reload      time.Duration
	blobURL     string
	// blobThreshold is the payload size above which payloads go to the blob store.
	blobThreshold int
	// shellOutput is --max-shell-output (0: chosen by shellOutputLimit).
	shellOutput int
	auth        authFlags
	devAuth     devAuthFlags
}

// quotaFlags collects --workflow-quota NAME=USD.
type quotaFlags map[string]decimal.Decimal

func (q *quotaFlags) String() string { return fmt.Sprint(map[string]decimal.Decimal(*q)) }

func (q *quotaFlags) Set(v string) error {
	name, amount, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("want NAME=USD, got %q", v)
	}
	d, err := budget.ParseUSD(amount)
	if err != nil {
		return err
	}
	if *q == nil {
		*q = quotaFlags{}
	}
	(*q)[strings.TrimSpace(name)] = d
	return nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func parse(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("flow-worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&cfg.dev, "dev", false, "run an embedded Temporal server and the Web UI in this process")
	fs.StringVar(&cfg.dbFile, "db-file", "", "with --dev: keep the server's state in this SQLite file (default: in memory)")
	fs.IntVar(&cfg.port, "port", 7233, "with --dev: the Temporal frontend port")
	fs.IntVar(&cfg.uiPort, "ui-port", 8233, "with --dev: the Web UI port (0: no UI)")
	fs.StringVar(&cfg.address, "address", "", "without --dev: the Temporal frontend (default: the profile's, TEMPORAL_ADDRESS, else localhost:7233)")
	fs.StringVar(&cfg.namespace, "namespace", "", "the Temporal namespace (default: the profile's, TEMPORAL_NAMESPACE, else default)")
	fs.StringVar(&cfg.profile, "profile", "", "without --dev: profile of the Temporal config file (TEMPORAL_PROFILE); TLS and API keys come from it or TEMPORAL_TLS_*, TEMPORAL_API_KEY")
	fs.StringVar(&cfg.taskQueue, "task-queue", core.DefaultTaskQueue, "the task queue to serve")
	fs.StringVar(&cfg.serverLog, "server-log-level", "", "with --dev: show the server's own logs at this level (debug, info, warn, error)")
	fs.DurationVar(&cfg.stopTimeout, "stop-timeout", 30*time.Second, "grace period for in-flight steps on shutdown")
	fs.StringVar(&cfg.tags, "tags", "", "comma-separated tags this worker offers (runs started with --tag go only to workers with all their tags)")
	fs.StringVar(&cfg.flowsDir, "flows", "", "serve the declarative definitions (*.yaml, *.yml, *.json) of this directory; edits, additions and removals are picked up without a restart (default with --dev: examples/flows when it exists)")
	fs.StringVar(&cfg.model, "model", "", "model of the definitions' agent steps that name none (default with --dev: scripted)")
	fs.DurationVar(&cfg.reload, "reload-interval", serve.DefaultInterval, "how often --flows DIR is polled for edits, additions and removals (0: never)")
	fs.StringVar(&cfg.blobURL, "blob-url", "", "blob store of payloads over --blob-threshold, of the step cache and of shell steps' artifacts: file:///dir, s3://bucket?region=..., gs://bucket, azblob://container ("+blobEnv+"; default with --dev: a directory next to --db-file, else under the temporary directory; otherwise none)")
	fs.IntVar(&cfg.blobThreshold, "blob-threshold", blob.DefaultThreshold, "with a blob store: payloads bigger than this many bytes are kept there, with a reference in the history")
	fs.IntVar(&cfg.shellOutput, "max-shell-output", 0, "bytes of stdout and of stderr a shell step keeps: its result carries at most 256 KiB of each, a blob store keeps longer ones whole up to this bound (0: 1 GiB with a blob store; 256 KiB without one, the most allowed then)")
	fs.Func("webhook", "POST every run event as JSON to this URL (repeatable)", func(v string) error {
		cfg.webhooks = append(cfg.webhooks, v)
		return nil
	})
	fs.BoolVar(&cfg.logEvents, "log-events", false, "write every run event to the log")
	fs.Func("event-types", "comma-separated: --webhook and --log-events get only these event types (default: all)", func(v string) (err error) {
		cfg.eventsSub.Types, err = events.ParseTypes(v)
		return err
	})
	fs.Func("event-flows", "comma-separated: --webhook and --log-events get only the events of these flows (default: all)", func(v string) error {
		cfg.eventsSub.Workflows = splitList(v)
		return nil
	})
	cfg.auth.register(fs)
	fs.StringVar(&cfg.logLevel, "log-level", "warn", "worker and workflow log level: debug, info, warn, error, off")
	fs.StringVar(&cfg.logFormat, "log-format", "console", "log format: console or json (structured zap logs on stderr)")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve Prometheus metrics (the SDK's and gateflow's, through OpenTelemetry) on this address, e.g. 127.0.0.1:9233, at /metrics; traces go where the OTEL_* variables say (OTLP)")
	fs.StringVar(&cfg.maxCost, "max-cost", "", "default money cap (USD) of runs whose start options and flow set none")
	fs.StringVar(&cfg.quota, "monthly-quota", "", "overall monthly quota (USD): new runs are refused once it is spent")
	fs.Var(&cfg.services, "service", serviceHelp)
	fs.Var(&cfg.mcp, "mcp", mcpHelp)
	fs.Var(&cfg.wfQuotas, "workflow-quota", "monthly quota of one workflow, NAME=USD (repeatable)")
	fs.StringVar(&cfg.groupsFile, "groups", "", `JSON file of approver groups: {"release": ["alice", "bob"]} (default: the examples' group:release = alice, bob, carol)`)
	fs.StringVar(&cfg.pricesFile, "prices", "", `JSON file of model prices overriding the defaults: {"model": {"input_per_mtok": "2.50", "output_per_mtok": "10.00"}}`)
	fs.StringVar(&cfg.rulesFile, "provider-rules", "", `YAML or JSON file of the scripted agent provider's answers, tried before the examples': [{"match": "prompt substring", "text": "answer", "input_tokens": 1200, "output_tokens": 40}]`)
	cfg.devAuth.register(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: flow-worker [--dev [--db-file PATH] [--port 7233] [--ui-port 8233]] [--task-queue gateflow]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if !cfg.dev && cfg.dbFile != "" {
		return cfg, fmt.Errorf("--db-file needs --dev")
	}
	if err := cfg.devAuth.check(cfg.dev); err != nil {
		return cfg, err
	}
	if cfg.taskQueue == "" {
		return cfg, fmt.Errorf("--task-queue is empty")
	}
	return cfg, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parse(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		return 2
	}
	devMCPServers(&cfg) // devmcp.go: --dev declares the example MCP server when it is built
	providers, prices, err := agentConfig(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		return 2
	}
	opts := flow.WorkerOptions{TaskQueue: cfg.taskQueue, StopTimeout: cfg.stopTimeout, Providers: providers, Prices: prices,
		Quotas: budget.Quotas{PerWorkflow: cfg.wfQuotas}, Services: cfg.services,
		MCPServers: cfg.mcp}
	if cfg.tags != "" {
		for _, t := range strings.Split(cfg.tags, ",") {
			opts.Tags = append(opts.Tags, strings.TrimSpace(t))
		}
		if _, err := protocol.TaggedQueues(cfg.taskQueue, opts.Tags); err != nil {
			fmt.Fprintln(stderr, "flow-worker: --tags:", err)
			return 2
		}
	}
	if cfg.maxCost != "" {
		d, err := budget.ParseUSD(cfg.maxCost)
		if err != nil {
			fmt.Fprintln(stderr, "flow-worker: --max-cost:", err)
			return 2
		}
		opts.MaxCostUSD = &d
	}
	if cfg.quota != "" {
		d, err := budget.ParseUSD(cfg.quota)
		if err != nil {
			fmt.Fprintln(stderr, "flow-worker: --monthly-quota:", err)
			return 2
		}
		opts.Quotas.MonthlyUSD = &d
	}
	policy, err := cfg.auth.policy(context.Background())
	if err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		return 2
	}
	opts.Auth = policy
	var directory approval.Directory = examples.Directory()
	if cfg.groupsFile != "" {
		d, err := approval.LoadDirectory(cfg.groupsFile)
		if err != nil {
			fmt.Fprintln(stderr, "flow-worker: --groups:", err)
			return 2
		}
		directory = d
	}
	blobs, codec, err := openBlobs(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		return 2
	}
	if opts.ShellOutputBytes, err = shellOutputLimit(cfg.shellOutput, codec != nil); err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		return 2
	}
	if blobs != nil {
		defer blobs.Close()
		cfg.blobURL = blobs.URL()  // what the banner shows
		opts.BlobURL = blobs.URL() // the step cache (flow.Cache) and artifacts
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	var co client.Options
	var srv *devserver.Server
	var da *devAuth
	if cfg.dev {
		ns := cfg.namespace
		if ns == "" {
			ns = connect.DefaultNamespace
		}
		if da, err = cfg.devAuth.setup(cfg.dbFile, ns); err != nil {
			fmt.Fprintln(stderr, "flow-worker:", err)
			return 2
		}
		dopts := devserver.Options{
			Port: cfg.port, UIPort: cfg.uiPort, DBFile: cfg.dbFile, Namespace: ns, LogLevel: cfg.serverLog,
			Codec: codecOrNil(codec),
		}
		if da != nil {
			dopts.Auth = da.server
		}
		srv, err = devserver.Start(dopts)
		if err != nil {
			fmt.Fprintln(stderr, "flow-worker:", err)
			return 1
		}
		co = client.Options{HostPort: srv.FrontendAddress(), Namespace: ns}
		if da != nil {
			co.Credentials = client.NewAPIKeyStaticCredentials(da.worker)
			co.ConnectionOptions.TLSDisabled = true
		}
	} else if co, err = connect.Options(connect.Request{Profile: cfg.profile, Address: cfg.address, Namespace: cfg.namespace}); err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		return 2
	}
	address, namespace := co.HostPort, co.Namespace
	stopServer := func() {
		if srv != nil {
			if err := srv.Stop(); err != nil {
				fmt.Fprintln(stderr, "flow-worker:", err)
			}
		}
	}

	co.Logger = logging.New(stderr, cfg.logLevel, cfg.logFormat)
	if codec != nil {
		co.DataConverter = blob.DataConverter(nil, codec)
	}
	stopTelemetry, code := startTelemetry(&co, cfg.metricsAddr, stdout, stderr) // telemetry.go
	if code != 0 {
		stopServer()
		return code
	}
	defer stopTelemetry()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	tc, err := client.DialContext(ctx, co)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "flow-worker: connect to Temporal at %s (namespace %s): %v\n", address, namespace, err)
		stopServer()
		return 1
	}
	opts.Directory = directory
	for _, u := range cfg.webhooks {
		opts.EventSinks = append(opts.EventSinks, events.Subscribe(events.Webhook{URL: u}, cfg.eventsSub))
	}
	if cfg.logEvents {
		opts.EventSinks = append(opts.EventSinks, events.Subscribe(events.Log{Logger: logging.New(stderr, "info", cfg.logFormat)}, cfg.eventsSub))
	}
	w := flow.NewWorker(tc, opts, examples.All()...)
	loader, err := serveDefinitions(w, cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		tc.Close()
		stopServer()
		return 1
	}
	if err := w.Start(); err != nil {
		fmt.Fprintln(stderr, "flow-worker:", err)
		tc.Close()
		stopServer()
		return 1
	}
	printBanner(stdout, cfg, address, namespace, srv, w, loader, policy, da)
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	if loader != nil && cfg.reload > 0 {
		go func() { _ = loader.Watch(watchCtx, cfg.reload) }()
	}
	go watchQueueConflicts(watchCtx, tc, w, stderr) // queueconflict.go

	sig := <-sigs
	stopWatch()
	fmt.Fprintf(stdout, "flow-worker: %s received, stopping (in-flight steps get %s; send it again to exit now)\n", sig, cfg.stopTimeout)
	done := make(chan struct{})
	go func() {
		w.Stop()
		tc.Close()
		stopServer()
		close(done)
	}()
	select {
	case <-done:
		fmt.Fprintln(stdout, "flow-worker: stopped")
		return 0
	case sig := <-sigs:
		fmt.Fprintf(stderr, "flow-worker: %s received again, exiting now\n", sig)
		return 130
	}
}

// serveDefinitions loads the definitions of --flows (with --dev, examples/flows by
// default) onto w, and always adds the generic definition flow (flowctl start --file). It
// returns nil and no error when there is no directory to serve.
func serveDefinitions(w *flow.Worker, cfg config, stderr io.Writer) (*serve.Loader, error) {
	model := cfg.model
	if model == "" && cfg.dev {
		model = llm.ProviderScripted
	}
	var iopts []interp.Option
	if model != "" {
		iopts = append(iopts, interp.DefaultModel(model))
	}
	dir := cfg.flowsDir
	if dir == "" && cfg.dev {
		dir = examplesFlowsDir()
	}
	if dir == "" {
		return nil, serve.EnsureDefinitionFlow(w, iopts...)
	}
	l, err := serve.Dir(w, dir, serve.Options{Logger: definitionsLogger(stderr, cfg), Interp: iopts})
	if err != nil {
		return nil, fmt.Errorf("--flows %s: refusing to start: %w", dir, err)
	}
	return l, nil
}

// examplesFlowsDir is examples/flows in the working directory or next to the binary (or
// its parent, for bin/flow-worker in the repository), or "" when there is none.
func examplesFlowsDir() string {
	cands := []string{filepath.Join("examples", "flows")}
	if exe, err := os.Executable(); err == nil {
		d := filepath.Dir(exe)
		cands = append(cands, filepath.Join(d, "examples", "flows"), filepath.Join(d, "..", "examples", "flows"))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return filepath.Clean(c)
		}
	}
	return ""
}

// definitionsLogger is the loader's logger: reloads are worth seeing, so it logs at info
// unless --log-level asks for less (or off).
func definitionsLogger(stderr io.Writer, cfg config) *slog.Logger {
	level := slog.LevelInfo
	switch cfg.logLevel {
	case "off":
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	case "error":
		level = slog.LevelError
	case "debug":
		level = slog.LevelDebug
	}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

func printBanner(out io.Writer, cfg config, address, namespace string, srv *devserver.Server, w *flow.Worker, loader *serve.Loader, policy *auth.Policy, da *devAuth) {
	names := make([]string, 0)
	for _, f := range w.Flows() {
		names = append(names, f.Name)
	}
	if srv != nil {
		store := "in memory (lost on exit; --db-file PATH keeps it)"
		if cfg.dbFile != "" {
			store = cfg.dbFile
		}
		fmt.Fprintf(out, "gateflow dev server\n")
		fmt.Fprintf(out, "  Temporal server  %s  (namespace %s, store %s)\n", address, namespace, store)
		if srv.UIURL() != "" {
			fmt.Fprintf(out, "  Web UI           %s\n", srv.RunsURL(namespace))
		}
	} else {
		fmt.Fprintf(out, "gateflow worker\n  Temporal server  %s  (namespace %s)\n", address, namespace)
	}
	fmt.Fprintf(out, "  Task queue       %s\n  Flows            %s\n", w.TaskQueue(), strings.Join(names, ", "))
	if loader != nil {
		reload := "not reloaded"
		if cfg.reload > 0 {
			reload = "reloaded every " + cfg.reload.String()
		}
		fmt.Fprintf(out, "  Definitions      %s (%s: %s)\n", loader.Dir(), reload, strings.Join(loader.Names(), ", "))
	}
	if cfg.blobURL != "" {
		fmt.Fprintf(out, "  Blob store       %s (payloads over %d bytes)\n", cfg.blobURL, cfg.blobThreshold)
	}
	for i, d := range cfg.services {
		label := ""
		if i == 0 {
			label = "Services"
		}
		fmt.Fprintf(out, "  %-16s %s\n", label, describeService(d))
	}
	if len(cfg.mcp) > 0 {
		fmt.Fprintf(out, "  MCP servers      %s\n", strings.Join(cfg.mcp.names(), ", "))
	}
	if len(cfg.tags) > 0 {
		fmt.Fprintf(out, "  Tags             %s\n", cfg.tags)
	}
	if policy != nil {
		fmt.Fprintf(out, "  Decisions        %s\n", describePolicy(policy))
	}
	addrFlag := ""
	if address != "localhost:7233" && address != "127.0.0.1:7233" {
		addrFlag = " --address " + address
	}
	ui := ""
	if srv != nil {
		ui = srv.UIURL()
	}
	da.printBanner(out, addrFlag, ui)
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Try:\n  flowctl%s start hello --input '{\"name\":\"Ada\"}' --wait\n", addrFlag)
	health := ""
	if srv != nil && srv.UIURL() != "" {
		health = fmt.Sprintf(`,"health_url":"%s/healthz"`, srv.UIURL())
	}
	fmt.Fprintf(out, "  flowctl%s start release --input '{\"version\":\"1.2.3\"%s}' --wait\n\n", addrFlag, health)
	fmt.Fprintf(out, "flow-worker: ready\n")
}

// agentConfig is the agent providers (the environment's, plus the scripted one the
// examples use, with the rules of --provider-rules first) and the price table (defaults,
// overridden by --prices).
func agentConfig(cfg config) (map[string]llm.Provider, llm.PriceTable, error) {
	providers, err := llm.ProvidersFromEnv()
	if err != nil {
		return nil, nil, err
	}
	for name, p := range examples.Providers() {
		if _, ok := providers[name]; !ok {
			providers[name] = p
		}
	}
	if cfg.rulesFile != "" {
		rules, err := llm.LoadScriptRules(cfg.rulesFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--provider-rules: %w", err)
		}
		providers[llm.ProviderScripted] = llm.NewScripted(append(rules, examples.ScriptedRules()...)...)
	}
	prices := llm.DefaultPrices()
	if cfg.pricesFile != "" {
		extra, err := llm.LoadPrices(cfg.pricesFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--prices: %w", err)
		}
		prices = prices.Merge(extra)
	}
	return providers, prices, nil
}
