// Package connect builds the Temporal client options of gateflow's binaries the way the
// Temporal CLI does: from a profile of the Temporal config file (TEMPORAL_CONFIG_FILE, else
// the user's temporalio/temporal.toml), then the standard environment variables
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, ...), then the
// command line, so TLS and API keys work without flags of their own.
package connect

import (
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/gateflow/gateflow/internal/devauth"
)

// Defaults when nothing else sets them.
const (
	DefaultAddress   = "localhost:7233"
	DefaultNamespace = "default"
)

// Request says what the command line gave; empty fields leave the profile and
// environment's values.
type Request struct {
	// Profile is the config file's profile (TEMPORAL_PROFILE; default "default").
	Profile   string
	Address   string
	Namespace string
}

// Options loads the client options for r.
func Options(r Request) (client.Options, error) {
	o, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFileProfile: r.Profile})
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal connection settings: %w", err)
	}
	if r.Address != "" {
		o.HostPort = r.Address
	}
	if r.Namespace != "" {
		o.Namespace = r.Namespace
	}
	if o.HostPort == "" {
		o.HostPort = DefaultAddress
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Credentials == nil {
		// A DEV ONLY token of `flowctl login` for this address (package devauth).
		l, err := devauth.LoadLogin(o.HostPort, time.Now())
		if err != nil {
			return client.Options{}, err
		}
		if l != nil {
			o.Credentials = client.NewAPIKeyStaticCredentials(l.Token)
			if o.ConnectionOptions.TLS == nil {
				o.ConnectionOptions.TLSDisabled = true // the dev server speaks plaintext
			}
		}
	}
	return o, nil
}

// CurrentUser is the identity of the person at the keyboard: FLOW_USER, else the name of
// the DEV ONLY `flowctl login`, else the OS user.
func CurrentUser() string {
	if u := strings.TrimSpace(os.Getenv("FLOW_USER")); u != "" {
		return u
	}
	if u := devauth.LoginSubject(time.Now()); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}
