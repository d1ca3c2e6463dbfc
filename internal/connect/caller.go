package connect

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/contrib/envconfig"

	"github.com/gateflow/gateflow/auth"
	"github.com/gateflow/gateflow/internal/devauth"
)

// Caller is who the connection settings authenticate: the subject of a bearer token (the
// profile's api_key or TEMPORAL_API_KEY, when it is a JWT), the common name of an mTLS
// client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH/DATA or the profile's), or the name of
// a DEV ONLY `flowctl login`. The server checks the credential; gateflow's binaries use its
// subject as the caller's identity, so a typed one (--as, FLOW_USER) cannot stand in for it.
type Caller struct {
	// Subject is the authenticated name; empty when the settings carry no credential
	// gateflow can read a name from (none, or an opaque API key).
	Subject string
	// Source says where Subject comes from: "api key", "client certificate" or
	// "dev login".
	Source string
}

// Authenticated reports the caller that the connection settings for r authenticate.
func Authenticated(r Request) (Caller, error) {
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{ConfigFileProfile: r.Profile})
	if err != nil {
		return Caller{}, fmt.Errorf("temporal connection settings: %w", err)
	}
	if k := strings.TrimSpace(prof.APIKey); k != "" {
		if sub, err := auth.TokenSubject(k); err == nil {
			return Caller{Subject: sub, Source: "api key"}, nil
		}
		return Caller{Source: "api key"}, nil // opaque: only the server knows whose it is
	}
	if prof.TLS != nil && !prof.TLS.Disabled {
		data := prof.TLS.ClientCertData
		if len(data) == 0 && prof.TLS.ClientCertPath != "" {
			if data, err = os.ReadFile(prof.TLS.ClientCertPath); err != nil {
				return Caller{}, fmt.Errorf("client certificate: %w", err)
			}
		}
		if len(data) > 0 {
			cn, err := certName(data)
			if err != nil {
				return Caller{}, err
			}
			return Caller{Subject: cn, Source: "client certificate"}, nil
		}
	}
	addr := r.Address
	if addr == "" {
		addr = prof.Address
	}
	if addr == "" {
		addr = DefaultAddress
	}
	l, err := devauth.LoadLogin(addr, time.Now())
	if err != nil {
		return Caller{}, err
	}
	if l != nil {
		return Caller{Subject: l.Subject, Source: "dev login"}, nil
	}
	return Caller{}, nil
}

// certName is the common name of the first certificate in PEM data.
func certName(data []byte) (string, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return "", fmt.Errorf("client certificate: no PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return "", fmt.Errorf("client certificate: %w", err)
	}
	if c.Subject.CommonName == "" {
		return "", fmt.Errorf("client certificate: no common name (CN) to take as the caller's name")
	}
	return c.Subject.CommonName, nil
}
