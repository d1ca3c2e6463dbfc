package flowctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
			c, by, err := a.operator(cmd, "terminate", reason)
			if err != nil {
				return err
			}
			if err := c.Temporal().TerminateWorkflow(cmd.Context(), args[0], "", reason+" (by "+by+")"); err != nil {
				return runCallError(cmd.Context(), c, "terminate", args[0], err)
			}
			if a.output == "json" {
				return printJSON(a.stdout, map[string]string{"run": args[0], "status": "terminated", "reason": reason})
			}
			fmt.Fprintf(a.stdout, "Run %s terminated (%s).\n", args[0], a.asWho(by))
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept in the run's history")
	return cmd
}

// operator checks the --reason of an operator action (terminate, reset) and returns the
// client and who acts: the caller's identity, as votes have it (authenticated when
// flowctl has a credential, typed otherwise).
func (a *app) operator(cmd *cobra.Command, what, reason string) (*flowclient.Client, string, error) {
	if strings.TrimSpace(reason) == "" {
		return nil, "", usageErr("%s needs --reason saying why (kept in the run's history)", what)
	}
	c, err := a.client(cmd.Context())
	if err != nil {
		return nil, "", err
	}
	by, err := a.who("")
	if err != nil {
		return nil, "", err
	}
	return c, by, nil
}

// queryCommand is `flowctl query RUN [NAME]`: a Query of the run, gateflow.state by
// default, printed as JSON.
func (a *app) queryCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "query RUN [NAME]",
		Short: "Query a run (default " + protocol.QueryState + ", the run's state) and print the answer as JSON",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := protocol.QueryState
			if len(args) == 2 {
				name = args[1]
			}
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			v, err := c.Temporal().QueryWorkflow(cmd.Context(), args[0], "", name)
			if err != nil {
				return runCallError(cmd.Context(), c, "query "+name, args[0], err)
			}
			var raw json.RawMessage
			if err := v.Get(&raw); err != nil {
				return fmt.Errorf("query %s of run %s: decode the answer: %w", name, args[0], err)
			}
			return printJSON(a.stdout, raw)
		},
	}
}

// rerunCommand is `flowctl rerun RUN`: a new run of the same flow with the same input.
func (a *app) rerunCommand() *cobra.Command {
	var id string
	cmd := &cobra.Command{
		Use:   "rerun RUN [--id NEW]",
		Short: "Start a new run of a run's flow with the same input (after a failure, say)",
		Args:  exactArgs(1, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			by, err := a.who("")
			if err != nil {
				return err
			}
			name, input, err := a.startOf(cmd.Context(), args[0])
			if err != nil {
				return runCallError(cmd.Context(), c, "rerun", args[0], err)
			}
			run, err := c.Start(cmd.Context(), name, input, core.StartOptions{ID: id, CreatedBy: by})
			if err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, run)
			}
			fmt.Fprintf(a.stdout, "Started %s run %s with the input of %s\n  flowctl show %s\n", run.Workflow, run.ID, args[0], run.ID)
			return nil
		},
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
