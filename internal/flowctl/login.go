package flowctl

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/internal/connect"
	"github.com/gateflow/gateflow/internal/devauth"
)

// loginCommand is `flowctl login NAME`: a DEV ONLY bearer token minted from the dev key of
// `flow-worker --dev --auth`.
func (a *app) loginCommand() *cobra.Command {
	var keyPath string
	var ttl time.Duration
	var export, worker bool
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "DEV ONLY: get a token as NAME from the dev key of `flow-worker --dev --auth`",
		Long: "DEV ONLY. Mints a bearer token for NAME with the signing key `flow-worker --dev --auth`\n" +
			"generated, and keeps it (in gateflow/dev-login.json under the user's config directory,\n" +
			"or GATEFLOW_DEV_LOGIN) so flowctl sends it to that server (--address) from then on.\n" +
			"Anyone who can read the key file can log in as anyone: this exercises the server's\n" +
			"checks with no identity provider, it authenticates no one. On a cluster, get tokens\n" +
			"from your identity provider and set TEMPORAL_API_KEY or the profile's api_key.\n" +
			"--export prints shell exports (TEMPORAL_API_KEY, TEMPORAL_TLS=false) for other tools\n" +
			"instead of keeping the token.",
		Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := devauth.CheckSubject(name); err != nil {
				return usageErr("login: %v", err)
			}
			if ttl <= 0 {
				return usageErr("--ttl %s: want a positive duration", ttl)
			}
			key, err := devauth.Load(keyPath)
			if err != nil {
				return usageErr("login: %v (start `flow-worker --dev --auth` first, or pass its key with --dev-key)", err)
			}
			o, err := connect.Options(connect.Request{Profile: a.profile, Address: a.address, Namespace: a.namespace})
			if err != nil {
				return usageErr("%v", err)
			}
			now := time.Now()
			t := devauth.Token{Subject: name, TTL: ttl}
			if worker {
				// A worker principal: may signal entity workflows, terminate, poll tasks.
				t.Permissions = []string{o.Namespace + ":" + devauth.RoleWorker}
			}
			tok, err := key.Mint(t, now)
			if err != nil {
				return usageErr("login: %v", err)
			}
			if export {
				fmt.Fprintf(a.stdout, "# DEV ONLY token for %s (expires %s)\nexport TEMPORAL_API_KEY=%s\nexport TEMPORAL_TLS=false\n",
					name, now.Add(ttl).UTC().Format(time.RFC3339), tok)
				return nil
			}
			l := devauth.Login{Address: o.HostPort, Subject: name, Token: tok, Expires: now.Add(ttl).UTC()}
			path, err := devauth.SaveLogin(l)
			if err != nil {
				return err
			}
			if a.output == "json" {
				return printJSON(a.stdout, map[string]any{"subject": name, "address": l.Address, "expires": l.Expires, "file": path, "dev_only": true})
			}
			role := ""
			if worker {
				role = " (a worker principal of namespace " + o.Namespace + ")"
			}
			fmt.Fprintf(a.stdout, "DEV ONLY login: flowctl now acts as %s%s on %s (token in %s, expires %s).\n",
				name, role, l.Address, path, l.Expires.Format(time.RFC3339))
			return nil
		},
	}
	cmd.Flags().StringVar(&keyPath, "dev-key", devauth.DefaultKeyPath(""), "the dev signing key of `flow-worker --dev --auth` (its banner names it)")
	cmd.Flags().DurationVar(&ttl, "ttl", 12*time.Hour, "how long the token is valid")
	cmd.Flags().BoolVar(&worker, "worker", false, "mint a worker principal's token (for a flow-worker without --dev, or keyed signals) instead of a person's")
	cmd.Flags().BoolVar(&export, "export", false, "print shell exports for other tools instead of keeping the token")
	return cmd
}

// deniedReason is why the server refused the call (its Authorizer's reason, e.g. gateflow's
// dev server naming the rule), as " (reason)", or "".
func deniedReason(err error) string {
	var pd *serviceerror.PermissionDenied
	if errors.As(err, &pd) && pd.Reason != "" && !strings.Contains(err.Error(), pd.Reason) {
		return " (" + pd.Reason + ")"
	}
	return ""
}
