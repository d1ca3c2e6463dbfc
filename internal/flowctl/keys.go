package flowctl

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gateflow/gateflow/auth"
)

// keysCommand is `flowctl keys`: signing keys for decisions and the directory workers
// verify them with.
func (a *app) keysCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Make signing keys for decisions, and the key directory workers verify them with",
		Long: "A person signs votes and answers with their own key (flowctl --signing-key FILE, or FLOW_SIGNING_KEY);\n" +
			"a worker started with the key directory (flow-worker --auth-keys FILE) verifies them,\n" +
			"and with --auth-required refuses decisions that are not signed.",
	}
	var owner, out string
	newKey := &cobra.Command{
		Use:   "new KEY-ID --owner NAME --out FILE",
		Short: "Make an Ed25519 signing key for NAME (the private key file stays with that person)",
		Args:  exactArgs(1, "KEY-ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if owner == "" || out == "" {
				return usageErr("keys new needs --owner and --out")
			}
			if _, err := os.Stat(out); err == nil {
				return usageErr("--out %s exists; keys are never overwritten", out)
			}
			k, err := auth.NewKey(args[0], owner)
			if err != nil {
				return usageErr("%v", err)
			}
			if err := auth.SaveKey(out, k); err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, k.Public())
			}
			fmt.Fprintf(a.stdout, "Key %s of %s written to %s (keep it private).\n", k.ID, k.Owner, out)
			fmt.Fprintf(a.stdout, "Add it to the workers' directory: flowctl keys directory %s ... > directory.json\n", out)
			return nil
		},
	}
	newKey.Flags().StringVar(&owner, "owner", "", "the identity the key belongs to")
	newKey.Flags().StringVar(&out, "out", "", "file to write the private key to (mode 0600)")
	dir := &cobra.Command{
		Use:   "directory KEY-FILE...",
		Short: "Print the key directory (public keys only) of key files, for flow-worker --auth-keys",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var pub []auth.DirectoryKey
			for _, f := range args {
				k, err := auth.LoadKey(f)
				if err != nil {
					return usageErr("%v", err)
				}
				pub = append(pub, k.Public())
			}
			d, err := auth.NewDirectory(pub...)
			if err != nil {
				return usageErr("%v", err)
			}
			return printJSON(a.stdout, d)
		},
	}
	cmd.AddCommand(newKey, dir)
	return cmd
}
