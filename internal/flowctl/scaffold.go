package flowctl

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/flowclient"
)

// call is what a command's action works with: its context and arguments, the dialled
// client and who acts.
type call struct {
	ctx  context.Context
	args []string
	c    *flowclient.Client
	// by is who acts, resolved from the command's --as (the caller's identity when the
	// command takes no --as); "" for a command that acts as no one.
	by string
}

// run is the scaffold of a command that talks to the server: dial the client, resolve who
// acts (as: the command's --as, nil when no one acts), do the call and print the view it
// returns. Checks of the flags that need no server come before it.
func (a *app) run(cmd *cobra.Command, args []string, as *string, do func(call) (view, error)) error {
	c, err := a.client(cmd.Context())
	if err != nil {
		return err
	}
	x := call{ctx: cmd.Context(), args: args, c: c}
	if as != nil {
		if x.by, err = a.who(*as); err != nil {
			return err
		}
	}
	v, err := do(x)
	if err != nil {
		return err
	}
	return a.print(v)
}

// runE is run as a command's RunE, for commands with nothing to check before dialling.
func (a *app) runE(as *string, do func(call) (view, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error { return a.run(cmd, args, as, do) }
}

// asCaller is the as of a command that acts as the caller, with no --as of its own.
func asCaller() *string { return new(string) }
