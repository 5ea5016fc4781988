package testutil

import (
	"testing"

	"github.com/sibyldb/sibyl/internal/tlsconf"
)

// PKI is a certificate authority in a test's temporary directory, for
// the TLS of nodes and clients in tests.
type PKI struct {
	*tlsconf.Authority
}

// NewPKI makes a new authority named name.
func NewPKI(t testing.TB, name string) *PKI {
	t.Helper()
	a, err := tlsconf.NewAuthority(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return &PKI{a}
}

// Issue makes a certificate for name (valid for 127.0.0.1 to .255 and
// localhost, as a server's and a client's) and returns its certificate
// and key files.
func (p *PKI) Issue(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	c, k, err := p.Authority.Issue(name)
	if err != nil {
		t.Fatal(err)
	}
	return c, k
}
