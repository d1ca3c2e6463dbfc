package connect

import (
	"strings"
	"testing"
)

// FuzzCertName: a client certificate's common name becomes the caller's identity, read
// from PEM data the user's profile or environment points at. Any input gives a name or an
// error naming the client certificate, never a panic or an empty name.
func FuzzCertName(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("not a certificate"))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		name, err := certName(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "client certificate: ") {
				t.Fatalf("error %q does not name the client certificate", err)
			}
			return
		}
		if name == "" {
			t.Fatal("accepted a certificate without a name")
		}
	})
}
