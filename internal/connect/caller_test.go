package connect

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gateflow/gateflow/internal/devauth"
)

func TestAuthenticatedCallerComesFromTheCredential(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TEMPORAL_CONFIG_FILE", filepath.Join(dir, "none.toml"))
	t.Setenv("GATEFLOW_DEV_LOGIN", filepath.Join(dir, "login.json"))
	unset(t, "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_PROFILE", "TEMPORAL_API_KEY",
		"TEMPORAL_TLS", "TEMPORAL_TLS_CLIENT_CERT_PATH", "TEMPORAL_TLS_CLIENT_KEY_PATH", "FLOW_USER")

	c, err := Authenticated(Request{})
	require.NoError(t, err)
	assert.Equal(t, Caller{}, c, "no credential: nobody is authenticated")

	key, _, err := devauth.LoadOrCreate(filepath.Join(dir, "dev.key"))
	require.NoError(t, err)
	tok, err := key.Mint(devauth.Token{Subject: "alice", TTL: time.Hour}, time.Now())
	require.NoError(t, err)
	t.Setenv("TEMPORAL_API_KEY", tok)
	c, err = Authenticated(Request{})
	require.NoError(t, err)
	assert.Equal(t, Caller{Subject: "alice", Source: "api key"}, c, "a JWT API key names its subject")

	t.Setenv("TEMPORAL_API_KEY", "opaque-secret")
	c, err = Authenticated(Request{})
	require.NoError(t, err)
	assert.Equal(t, Caller{Source: "api key"}, c, "an opaque API key authenticates, but names no one gateflow can read")
	unset(t, "TEMPORAL_API_KEY")

	cert := filepath.Join(dir, "client.pem")
	writeCert(t, cert, "bob")
	t.Setenv("TEMPORAL_TLS_CLIENT_CERT_PATH", cert)
	c, err = Authenticated(Request{})
	require.NoError(t, err)
	assert.Equal(t, Caller{Subject: "bob", Source: "client certificate"}, c)

	require.NoError(t, os.WriteFile(cert, []byte("not a certificate"), 0o600))
	_, err = Authenticated(Request{})
	assert.ErrorContains(t, err, "client certificate")
	unset(t, "TEMPORAL_TLS_CLIENT_CERT_PATH")

	_, err = devauth.SaveLogin(devauth.Login{Address: "127.0.0.1:7999", Subject: "carol", Token: tok, Expires: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	c, err = Authenticated(Request{Address: "127.0.0.1:7999"})
	require.NoError(t, err)
	assert.Equal(t, Caller{Subject: "carol", Source: "dev login"}, c)
	c, err = Authenticated(Request{Address: "prod.example:7233"})
	require.NoError(t, err)
	assert.Equal(t, Caller{}, c, "a dev login counts only for its own address")
}

func writeCert(t *testing.T, path, cn string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
}
