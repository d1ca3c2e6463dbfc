package flowctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gateflow/gateflow/approval"
	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/budget"
	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/connect"
	"github.com/gateflow/gateflow/internal/display"
	"github.com/gateflow/gateflow/internal/logging"
	"github.com/gateflow/gateflow/internal/protocol"
	"github.com/gateflow/gateflow/internal/telemetry"
)

// Exit codes. exitCodes says what each means; `flowctl --help` lists them from it.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitNotFound    = 3
	ExitUnreachable = 4
	ExitRunFailed   = 5
	ExitRefused     = 6
	ExitPending     = 7
)

// exitCodes is the one list of flowctl's exit codes and their meanings, in order. A
// meaning may run over lines.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{ExitOK, "success"},
	{ExitError, "an error not listed below"},
	{ExitUsage, "bad usage or bad input (unknown flag, malformed JSON, unknown workflow, bad input; a run\n" +
		"ID, namespace or task queue that is empty, blank or not printable ASCII; validate: a definition is invalid)"},
	{ExitNotFound, "not found (the run does not exist; logs, reset: the run has no such step; artifacts get:\n" +
		"no such step or artifact; the namespace does not exist; no worker serves the task queue)"},
	{ExitUnreachable, "the Temporal server cannot be reached, or did not take a decision in time (it holds\n" +
		"no trace of it: nothing will happen, send it again)"},
	{ExitRunFailed, "with start --wait or watch: the run ended but did not complete; logs: the step failed,\n" +
		"timed out, was cancelled or refused"},
	{ExitRefused, "refused: a vote, an answer, a signal or a budget raise the run refused, or a start\n" +
		"refused by an exhausted monthly quota (the reason is printed)"},
	{ExitPending, "submitted, not yet validated: the run's worker did not answer the decision within\n" +
		"--decision-timeout; the Temporal server has queued it, and the run checks it (and counts it if\n" +
		"valid) when a worker is back; the server keeps it in memory only: a restart before then drops it"},
}

// exitCodesHelp is the exit code section of `flowctl --help`.
func exitCodesHelp() string {
	var b strings.Builder
	b.WriteString("Exit codes:")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, "\n  %d  %s", e.code, strings.ReplaceAll(e.meaning, "\n", "\n     "))
	}
	return b.String()
}

// exitError carries an exit code with the error to print.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, a...)}
}

// app holds the global flags and the lazily dialled client of one invocation.
type app struct {
	address   string
	namespace string
	profile   string
	taskQueue string
	output    string
	timeout   time.Duration
	blobURL   string
	keyFile   string
	decisionT time.Duration
	idToken   string

	stdin          io.Reader
	stdout, stderr io.Writer

	tc       client.Client
	blobs    io.Closer
	payloads payloadReader // blobs.go
	me       caller        // identity.go

	telemetry *telemetry.Telemetry // telemetry.go
}

// Execute runs flowctl with args and returns the process exit code. Errors are printed
// as one line on stderr.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	defer a.close()
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	err = a.explain(err)
	code := classify(err)
	fmt.Fprintf(stderr, "flowctl: %s\n", display.OneLine(err.Error()+deniedReason(err)))
	return code
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "flowctl",
		Short: "Operate gateflow runs on Temporal",
		Long: "flowctl starts, lists and inspects gateflow runs on a Temporal server.\n\n" +
			"It connects like the Temporal CLI: a profile of the Temporal config file\n" +
			"(--profile, TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE), then TEMPORAL_ADDRESS,\n" +
			"TEMPORAL_NAMESPACE, TEMPORAL_API_KEY and TEMPORAL_TLS_*, then the flags.\n" +
			"--task-queue defaults to TEMPORAL_TASK_QUEUE. Against `flow-worker --dev --auth`,\n" +
			"`flowctl login NAME` (dev only) gets a token.\n\n" +
			"With -o json or jsonl, durations are strings in Go's notation (\"24h0m0s\", \"1m30s\"), times RFC 3339;\n" +
			"`flowctl query` prints the Query's answer as the worker sent it.\n\n" + exitCodesHelp(),
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(a.output); err != nil {
				return err
			}
			return checkRunArgs(cmd, args)
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: ExitUsage, err: err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.address, "address", "", "Temporal frontend host:port (default: the profile's, TEMPORAL_ADDRESS, else localhost:7233)")
	pf.StringVarP(&a.namespace, "namespace", "n", "", "Temporal namespace (default: the profile's, TEMPORAL_NAMESPACE, else default)")
	pf.StringVar(&a.profile, "profile", "", "profile of the Temporal config file (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE); TLS and API keys come from it or TEMPORAL_TLS_*, TEMPORAL_API_KEY")
	pf.StringVar(&a.taskQueue, "task-queue", envOr("TEMPORAL_TASK_QUEUE", core.DefaultTaskQueue), "task queue of the gateflow workers (TEMPORAL_TASK_QUEUE)")
	pf.StringVarP(&a.output, "output", "o", formatTable, "output format: table, json, or jsonl (compact JSON, one object a line: a list one item a line)")
	pf.StringVar(&a.blobURL, "blob-url", envOr(blobEnv, ""), "blob store holding the workers' big payloads ("+blobEnv+"; default: read only the in-memory dev server's when it exists)")
	pf.StringVar(&a.keyFile, "signing-key", envOr("FLOW_SIGNING_KEY", ""), "signing key file (flowctl keys new): votes and answers are signed with it, as its owner (FLOW_SIGNING_KEY)")
	pf.StringVar(&a.idToken, "id-token", "", "file holding a token of your identity provider (OIDC), sent as the proof of votes and answers when there is no --signing-key (FLOW_ID_TOKEN holds the token itself)")
	pf.DurationVar(&a.decisionT, "decision-timeout", 30*time.Second, "how long a vote, answer, budget raise or pause waits for the run's answer (exit 7 past it)")
	pf.DurationVar(&a.timeout, "connect-timeout", 5*time.Second, "how long to try reaching the server")
	root.AddCommand(a.workflowsCommand(), a.startCommand(), a.showCommand(), a.listCommand(),
		a.approvalsCommand(),
		a.voteCommand("approve", approval.Approve, "Approve an approval gate of a run (or a polled gate that allows a manual decision)"),
		a.voteCommand("reject", approval.Reject, "Reject an approval gate of a run (or a polled gate that allows a manual decision)"),
		a.voteCommand("request-changes", approval.RequestChanges, "Ask for changes at an approval gate (needs --comment)"),
		a.inputCommand(), a.signalCommand(), a.budgetCommand(),
		a.watchCommand(), a.logsCommand(), a.historyCommand(), a.setupCommand(), a.completionCommand())
	root.AddCommand(a.cancelCommand(), a.planCommand(), a.schedulesCommand())
	root.AddCommand(a.validateCommand(), a.flowsCommand(), a.servicesCommand(), a.artifactsCommand())
	root.AddCommand(a.pauseCommands()...)
	root.AddCommand(a.keysCommand(), a.auditCommand(), a.loginCommand())
	root.AddCommand(a.temporalCommands()...)
	return root
}

// client dials the server once per invocation.
func (a *app) client(ctx context.Context) (*flowclient.Client, error) {
	if a.tc == nil {
		o, err := connect.Options(connect.Request{Profile: a.profile, Address: a.address, Namespace: a.namespace})
		if err != nil {
			return nil, usageErr("%v", err)
		}
		o.Logger = logging.NewSDKLogger(a.stderr, "off")
		if err := a.traced(ctx, &o); err != nil {
			return nil, err
		}
		if o, err = a.withBlobs(ctx, o); err != nil {
			return nil, err
		}
		a.address, a.namespace = o.HostPort, o.Namespace // what the commands report
		if err := protocol.CheckName("namespace", o.Namespace); err != nil {
			return nil, usageErr("%v", err)
		}
		if err := protocol.CheckName("task queue", a.taskQueue); err != nil {
			return nil, usageErr("--task-queue: %v", err)
		}
		dctx, cancel := context.WithTimeout(ctx, a.timeout)
		defer cancel()
		tc, err := client.DialContext(dctx, o)
		if err != nil {
			return nil, &exitError{code: ExitUnreachable, err: fmt.Errorf("cannot reach Temporal at %s: %v", o.HostPort, rootCause(err))}
		}
		a.tc = tc
	}
	opts := flowclient.Options{TaskQueue: a.taskQueue, Namespace: a.namespace, DecisionTimeout: a.decisionT}
	if a.keyFile != "" {
		k, err := auth.LoadKey(a.keyFile)
		if err != nil {
			return nil, usageErr("--signing-key: %v", err)
		}
		opts.Key = &k
	}
	tok := strings.TrimSpace(os.Getenv("FLOW_ID_TOKEN"))
	if a.idToken != "" {
		b, err := os.ReadFile(a.idToken)
		if err != nil {
			return nil, usageErr("--id-token: %v", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok != "" && opts.Key == nil {
		if _, err := auth.TokenSubject(tok); err != nil {
			return nil, usageErr("--id-token: %v", err)
		}
		opts.IdentityToken = tok
	}
	if err := a.resolveCaller(&opts); err != nil {
		return nil, err
	}
	return flowclient.New(a.tc, opts), nil
}

func (a *app) close() {
	if a.tc != nil {
		a.tc.Close()
	}
	if a.blobs != nil {
		_ = a.blobs.Close()
	}
	a.closeTelemetry()
}

// classify maps an error to its exit code.
func classify(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var unknown *core.UnknownWorkflowError
	var input *core.InputError
	var exists *flowclient.RunExistsError
	var notFound *flowclient.RunNotFoundError
	var refused *flowclient.RefusedError
	var quota *budget.QuotaError
	var maxRuns *flowclient.MaxRunsError
	var unavailable *serviceerror.Unavailable
	var notDelivered *flowclient.NotDeliveredError
	switch {
	case errors.Is(err, core.ErrNotValidated):
		return ExitPending
	case errors.As(err, new(*protocol.NameError)):
		return ExitUsage
	case errors.As(err, new(*serviceerror.NamespaceNotFound)), errors.Is(err, core.ErrNoCatalog):
		return ExitNotFound
	case errors.As(err, &unknown), errors.As(err, &input), errors.As(err, &exists):
		return ExitUsage
	case errors.As(err, &notFound):
		return ExitNotFound
	case errors.As(err, &refused), errors.As(err, &quota), errors.As(err, &maxRuns), errors.As(err, new(*serviceerror.PermissionDenied)):
		return ExitRefused
	case errors.As(err, &unavailable), errors.As(err, &notDelivered), errors.Is(err, context.DeadlineExceeded):
		return ExitUnreachable
	case strings.HasPrefix(err.Error(), "unknown command"), strings.Contains(err.Error(), "accepts "),
		strings.Contains(err.Error(), "requires at least"):
		return ExitUsage
	}
	return ExitError
}

func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

func envOr(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}
