package flowctl

import (
	"encoding/json"
	"fmt"
	"io"
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
			pub, err := json.MarshalIndent(k.Public(), "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(out+".pub", append(pub, '\n'), 0o644); err != nil {
				return fmt.Errorf("write the public key: %w", err)
			}
			return a.print(view{value: k.Public(), text: say("Key %s of %s written to %s (keep it private), its public half to %s.pub.\n"+
				"Add it to the workers' directory: flowctl keys directory %s.pub ... > directory.json\n", k.ID, k.Owner, out, out, out)})
		},
	}
	newKey.Flags().StringVar(&owner, "owner", "", "the identity the key belongs to")
	newKey.Flags().StringVar(&out, "out", "", "file to write the private key to (mode 0600)")
	dir := &cobra.Command{
		Use:   "directory KEY.pub...",
		Short: "Print the key directory of public keys (the .pub files keys new writes, or key files), for flow-worker --auth-keys",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var pub []auth.DirectoryKey
			for _, f := range args {
				k, err := readPublicKey(f)
				if err != nil {
					return usageErr("%v", err)
				}
				pub = append(pub, k)
			}
			d, err := auth.NewDirectory(pub...)
			if err != nil {
				return usageErr("%v", err)
			}
			// The directory is a JSON file, in every format.
			return a.print(view{value: d, text: func(w io.Writer) error { return printJSON(w, d) }})
		},
	}
	cmd.AddCommand(newKey, dir)
	return cmd
}

// readPublicKey reads a public key file (keys new's .pub) or, from a private key file, its
// public half.
func readPublicKey(path string) (auth.DirectoryKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return auth.DirectoryKey{}, err
	}
	var k auth.DirectoryKey
	if err := json.Unmarshal(b, &k); err == nil && k.JWK.Valid() && k.JWK.IsPublic() {
		return k, nil
	}
	priv, err := auth.LoadKey(path)
	if err != nil {
		return auth.DirectoryKey{}, fmt.Errorf("%s is neither a public key (.pub) nor a key file: %w", path, err)
	}
	return priv.Public(), nil
}
