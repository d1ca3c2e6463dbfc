package flowctl

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"

	"github.com/gateflow/gateflow/internal/connect"
	"github.com/gateflow/gateflow/internal/devauth"
	"github.com/gateflow/gateflow/internal/uigate"
)

// loginCommand is `flowctl login NAME`: a DEV ONLY bearer token minted from the dev key of
// `flow-worker --dev --auth`.
func (a *app) loginCommand() *cobra.Command {
	var keyPath, web string
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
			"instead of keeping the token. --web URL also prints a link that logs a browser in to\n" +
			"the Web UI at URL as NAME (the server's Web UI requires a login under --auth); the\n" +
			"token is in the link's fragment, which browsers do not send to servers.",
		Args: exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := devauth.CheckSubject(name); err != nil {
				return usageErr("login: %v", err)
			}
			if ttl <= 0 {
				return usageErr("--ttl %s: want a positive duration", ttl)
			}
			if _, err := webLoginLink(web, ""); err != nil {
				return usageErr("%v", err)
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
			link, _ := webLoginLink(web, tok)
			if export {
				fmt.Fprintf(a.stdout, "# DEV ONLY token for %s (expires %s)\nexport TEMPORAL_API_KEY=%s\nexport TEMPORAL_TLS=false\n",
					name, now.Add(ttl).UTC().Format(time.RFC3339), tok)
				if link != "" {
					fmt.Fprintf(a.stdout, "# Web UI login as %s: %s\n", name, link)
				}
				return nil
			}
			role := ""
			if worker {
				role = " (a worker principal of namespace " + o.Namespace + ")"
			}
			return a.saveLogin(devauth.Login{Address: o.HostPort, Subject: name, Token: tok, Expires: now.Add(ttl).UTC()}, role, link)
		},
	}
	cmd.Flags().StringVar(&keyPath, "dev-key", devauth.DefaultKeyPath(""), "the dev signing key of `flow-worker --dev --auth` (its banner names it)")
	cmd.Flags().DurationVar(&ttl, "ttl", 12*time.Hour, "how long the token is valid")
	cmd.Flags().BoolVar(&worker, "worker", false, "mint a worker principal's token (for a flow-worker without --dev, or keyed signals) instead of a person's")
	cmd.Flags().StringVar(&web, "web", "", "also print a link that logs a browser in to the Web UI at this URL (the worker's banner names it) as NAME")
	cmd.Flags().BoolVar(&export, "export", false, "print shell exports for other tools instead of keeping the token")
	return cmd
}

// saveLogin keeps l for flowctl and says so; role describes a worker principal, link is the
// Web UI login link ("" for none).
func (a *app) saveLogin(l devauth.Login, role, link string) error {
	path, err := devauth.SaveLogin(l)
	if err != nil {
		return err
	}
	out := map[string]any{"subject": l.Subject, "address": l.Address, "expires": l.Expires, "file": path, "dev_only": true}
	if link != "" {
		out["web_login_url"] = link
	}
	return a.print(view{value: out, text: func(w io.Writer) error {
		fmt.Fprintf(w, "DEV ONLY login: flowctl now acts as %s%s on %s (token in %s, expires %s).\n",
			l.Subject, role, l.Address, path, l.Expires.Format(time.RFC3339))
		if link != "" {
			fmt.Fprintf(w, "Web UI: open %s to log a browser in as %s (DEV ONLY: whoever has the link is %s until it expires).\n",
				link, l.Subject, l.Subject)
		}
		return nil
	}})
}

// webLoginLink is the link that logs a browser in to the Web UI at base with tok (in the
// fragment, which the browser keeps to itself), "" when base is "". A base that is not an
// http(s) URL of a host is an error.
func webLoginLink(base, tok string) (string, error) {
	if base == "" {
		return "", nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("--web %q: want the Web UI's base URL, like http://127.0.0.1:8233", base)
	}
	return strings.TrimRight(base, "/") + uigate.LoginPath + "#token=" + url.QueryEscape(tok), nil
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
