package flowctl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/internal/protocol"
)

// checkRunArgs checks the run IDs a command is given before anything is sent: its first
// argument when its usage names it RUN ("show RUN", "approve RUN GATE"), and a --run
// flag that takes a value (signal --run RUN). A bad one (empty, not printable ASCII, too
// long) exits 2 with a message naming it, rather than a raw gRPC header error.
func checkRunArgs(cmd *cobra.Command, args []string) error {
	if f := strings.Fields(cmd.Use); len(f) > 1 && f[1] == "RUN" && len(args) > 0 {
		if err := protocol.CheckRunID(args[0]); err != nil {
			return &exitError{code: ExitUsage, err: err}
		}
	}
	if fl := cmd.Flags().Lookup("run"); fl != nil && fl.Value.Type() == "string" && fl.Changed {
		if err := protocol.CheckRunID(fl.Value.String()); err != nil {
			return &exitError{code: ExitUsage, err: fmt.Errorf("--run: %w", err)}
		}
	}
	return nil
}

// explain turns the server's answer for an unknown namespace into one line that says
// which namespace and where it came from.
func (a *app) explain(err error) error {
	var nf *serviceerror.NamespaceNotFound
	if !errors.As(err, &nf) {
		return err
	}
	ns := nf.Namespace
	if ns == "" {
		ns = a.namespace
	}
	return &exitError{code: ExitNotFound, err: fmt.Errorf(
		"namespace %q not found on the Temporal server at %s (it comes from --namespace, TEMPORAL_NAMESPACE or the profile; `temporal operator namespace list` lists the server's)",
		ns, a.address)}
}
