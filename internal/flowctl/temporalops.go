package flowctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/gateflow/gateflow/core"
	"github.com/gateflow/gateflow/flowclient"
	"github.com/gateflow/gateflow/internal/protocol"
)

// temporalCommands are the run commands a Temporal user expects besides gateflow's own:
// terminate, query, rerun and reset (reset.go).
func (a *app) temporalCommands() []*cobra.Command {
	return []*cobra.Command{a.terminateCommand(), a.queryCommand(), a.rerunCommand(), a.resetCommand()}
}

// terminateCommand is `flowctl terminate RUN --reason`: Temporal's terminate, which ends
// the run at once (no OnError or Always steps, unlike cancel).
func (a *app) terminateCommand() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "terminate RUN --reason TEXT",
		Short: "End a run at once, as Temporal's terminate does (no cleanup steps run; prefer cancel)",
		Args:  exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := needReason("terminate", reason); err != nil {
				return err
			}
			return a.run(cmd, args, asCaller(), func(x call) (view, error) {
				if err := x.c.Temporal().TerminateWorkflow(x.ctx, x.args[0], "", reason+" (by "+x.by+")"); err != nil {
					return view{}, runCallError(x.ctx, x.c, "terminate", x.args[0], err)
				}
				return view{value: map[string]string{"run": x.args[0], "status": "terminated", "reason": reason},
					text: say("Run %s terminated (%s).\n", x.args[0], a.asWho(x.by))}, nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept in the run's history")
	return cmd
}

// needReason checks the --reason of an operator action (terminate, reset). The action is
// then taken as the caller (asCaller), as votes are: authenticated when flowctl has a
// credential, typed otherwise.
func needReason(what, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return usageErr("%s needs --reason saying why (kept in the run's history)", what)
	}
	return nil
}

// queryCommand is `flowctl query RUN [NAME]`: a Query of the run, gateflow.state by
// default, printed as JSON.
func (a *app) queryCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "query RUN [NAME]",
		Short: "Query a run (default " + protocol.QueryState + ", the run's state) and print the answer as JSON",
		Args:  cobra.RangeArgs(1, 2),
		RunE: a.runE(nil, func(x call) (view, error) {
			name := protocol.QueryState
			if len(x.args) == 2 {
				name = x.args[1]
			}
			v, err := x.c.Temporal().QueryWorkflow(x.ctx, x.args[0], "", name)
			if err != nil {
				return view{}, runCallError(x.ctx, x.c, "query "+name, x.args[0], err)
			}
			var raw json.RawMessage
			if err := v.Get(&raw); err != nil {
				return view{}, fmt.Errorf("query %s of run %s: decode the answer: %w", name, x.args[0], err)
			}
			// The answer is JSON, in every format.
			return view{value: raw, text: func(w io.Writer) error { return printJSON(w, raw) }}, nil
		}),
	}
}

// rerunCommand is `flowctl rerun RUN`: a new run of the same flow with the same input.
func (a *app) rerunCommand() *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "rerun RUN [--id NEW]",
		Short: "Start a new run of a run's flow with the same input (after a failure, say)",
		Args:  exactArgs(1, "RUN"),
		RunE: a.runE(asCaller(), func(x call) (view, error) {
			name, input, err := a.startOf(x.ctx, x.args[0])
			if err != nil {
				return view{}, runCallError(x.ctx, x.c, "rerun", x.args[0], err)
			}
			run, err := x.c.Start(x.ctx, name, input, core.StartOptions{ID: id, CreatedBy: x.by})
			if err != nil {
				return view{}, err
			}
			return view{value: run, text: say("Started %s run %s with the input of %s\n  flowctl show %s\n", run.Workflow, run.ID, x.args[0], run.ID)}, nil
		}),
	}
	cmd.Flags().StringVar(&id, "id", "", "the new run's ID (default: a new one)")
	return cmd
}

// startOf reads the workflow type and input a run was started with from its first event.
func (a *app) startOf(ctx context.Context, run string) (string, json.RawMessage, error) {
	h, err := a.tc.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
		Namespace: a.namespace, Execution: &commonpb.WorkflowExecution{WorkflowId: run}, MaximumPageSize: 1,
	})
	if err != nil {
		return "", nil, err
	}
	events := h.GetHistory().GetEvents()
	if len(events) == 0 || events[0].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
		return "", nil, fmt.Errorf("run %s: its history does not start with the run's start", run)
	}
	attrs := events[0].GetWorkflowExecutionStartedEventAttributes()
	input := json.RawMessage("null")
	if ps := attrs.GetInput().GetPayloads(); len(ps) > 0 {
		if enc := string(ps[0].GetMetadata()["encoding"]); enc != "json/plain" {
			return "", nil, fmt.Errorf("run %s: its input is encoded %q, not JSON; start it again with flowctl start", run, enc)
		}
		input = ps[0].GetData()
	}
	return attrs.GetWorkflowType().GetName(), input, nil
}

// runCallError is err of a call about run: not found (exit 3), refused by the server
// (exit 6), or as it is.
func runCallError(ctx context.Context, c *flowclient.Client, what, run string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		if _, derr := c.Temporal().DescribeWorkflowExecution(ctx, run, ""); derr != nil {
			return &flowclient.RunNotFoundError{ID: run}
		}
		return &exitError{code: ExitRefused, err: fmt.Errorf("%s run %s: %v", what, run, rootCause(err))}
	}
	return fmt.Errorf("%s run %s: %w", what, run, err)
}
