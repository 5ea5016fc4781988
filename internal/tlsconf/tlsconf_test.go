package tlsconf

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// pki is an authority in a test's directory.
type pki struct {
	*Authority
	t *testing.T
}

func newPKI(t *testing.T, name string) *pki {
	a, err := NewAuthority(t.TempDir(), name)
	if err != nil {
		t.Fatal(err)
	}
	return &pki{a, t}
}

func (p *pki) Issue(_ *testing.T, name string) (string, string) {
	c, k, err := p.Authority.Issue(name)
	if err != nil {
		p.t.Fatal(err)
	}
	return c, k
}

// echo serves l with srv's TLS, echoing what each connection sends.
func echo(t *testing.T, srv *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tl := srv.Listener(l)
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return l.Addr().String()
}

// roundTrip sends a line over c and reads it back.
func roundTrip(c net.Conn) error {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	b := make([]byte, 5)
	_, err := io.ReadFull(c, b)
	return err
}

func dialTLS(addr string, cfg *tls.Config) error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	return roundTrip(c)
}

func dialPlain(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	return roundTrip(c)
}

func clientConfig(t *testing.T, o ClientSettings) *tls.Config {
	t.Helper()
	cfg, err := o.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestClientAuthAndPlaintext: with require_client_auth a client gets in
// only with a certificate of the truststore's authority; a plaintext
// client on a TLS-only port is refused and counted, and taken when the
// port is optional.
func TestClientAuthAndPlaintext(t *testing.T) {
	pki, other := newPKI(t, "cluster"), newPKI(t, "elsewhere")
	cert, key := pki.Issue(t, "node")
	clientCert, clientKey := pki.Issue(t, "client")
	strangerCert, strangerKey := other.Issue(t, "stranger")
	opts := Options{Enabled: true, Keystore: cert, KeystoreKey: key, RequireClientAuth: true, Truststore: pki.CAFile}
	if err := opts.Validate("client_encryption_options"); err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	addr := echo(t, srv)
	good := ClientSettings{CAFile: pki.CAFile, VerifyServer: true, CertFile: clientCert, KeyFile: clientKey}
	if err := dialTLS(addr, clientConfig(t, good)); err != nil {
		t.Fatalf("a client with the right certificate: %v", err)
	}
	for name, o := range map[string]ClientSettings{
		"no client certificate":          {CAFile: pki.CAFile, VerifyServer: true},
		"a certificate of another CA":    {CAFile: pki.CAFile, VerifyServer: true, CertFile: strangerCert, KeyFile: strangerKey},
		"a client not trusting the node": {CAFile: other.CAFile, VerifyServer: true, CertFile: clientCert, KeyFile: clientKey},
	} {
		before := srv.HandshakeFailures.Load()
		if err := dialTLS(addr, clientConfig(t, o)); err == nil {
			t.Fatalf("%s: got in", name)
		}
		waitCount(t, name, &srv.HandshakeFailures, before+1)
	}
	before := srv.HandshakeFailures.Load()
	if err := dialPlain(addr); err == nil {
		t.Fatal("a plaintext client got in on a TLS-only port")
	}
	waitCount(t, "plaintext", &srv.HandshakeFailures, before+1)

	opts.Optional, opts.RequireClientAuth = true, false
	optional, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	addr = echo(t, optional)
	if err := dialPlain(addr); err != nil {
		t.Fatalf("plaintext on an optional port: %v", err)
	}
	if err := dialTLS(addr, clientConfig(t, ClientSettings{CAFile: pki.CAFile, VerifyServer: true})); err != nil {
		t.Fatalf("TLS on an optional port: %v", err)
	}
}

func waitCount(t *testing.T, what string, c interface{ Load() int64 }, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d handshake failures counted, want %d", what, c.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReloadsChangedCertificates: once the keystore's files change, new
// connections get the new certificate; files that do not load leave the
// old one in use.
func TestReloadsChangedCertificates(t *testing.T) {
	first, second := newPKI(t, "first"), newPKI(t, "second")
	cert, key := first.Issue(t, "node")
	srv, err := NewServer(Options{Enabled: true, Keystore: cert, KeystoreKey: key})
	if err != nil {
		t.Fatal(err)
	}
	var reloads []error
	srv.OnReload = func(err error) { reloads = append(reloads, err) }
	addr := echo(t, srv)
	trustFirst := clientConfig(t, ClientSettings{CAFile: first.CAFile, VerifyServer: true})
	trustSecond := clientConfig(t, ClientSettings{CAFile: second.CAFile, VerifyServer: true})
	if err := dialTLS(addr, trustFirst); err != nil {
		t.Fatal(err)
	}
	newCert, newKey := second.Issue(t, "node")
	replace := func(dst, src string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+".tmp", b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dst+".tmp", dst); err != nil {
			t.Fatal(err)
		}
	}
	replace(cert, newCert)
	replace(key, newKey)
	time.Sleep(reloadCheckInterval + 100*time.Millisecond)
	if err := dialTLS(addr, trustSecond); err != nil {
		t.Fatalf("after the files changed: %v (reloads %v)", err, reloads)
	}
	if srv.Reloads.Load() != 1 {
		t.Fatalf("%d reloads", srv.Reloads.Load())
	}
	if err := os.WriteFile(cert, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(reloadCheckInterval + 100*time.Millisecond)
	if err := dialTLS(addr, trustSecond); err != nil {
		t.Fatalf("a broken file replaced the certificate in use: %v", err)
	}
	if len(reloads) != 2 || reloads[1] == nil {
		t.Fatalf("reloads heard: %v", reloads)
	}
}

func TestOptionsRefusals(t *testing.T) {
	pki := newPKI(t, "ca")
	cert, key := pki.Issue(t, "node")
	encrypted := pki.Dir + "/encrypted.key"
	if err := os.WriteFile(encrypted, []byte("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Enabled: true}, "client_encryption_options.keystore: TLS is enabled and no keystore"},
		{Options{Enabled: true, Keystore: pki.Dir + "/missing.pem"}, "client_encryption_options.keystore: open"},
		{Options{Enabled: true, Keystore: cert}, "client_encryption_options.keystore: " + cert},
		{Options{Enabled: true, Keystore: cert, KeystoreKey: encrypted}, "the private key is encrypted"},
		{Options{Enabled: true, Keystore: cert, KeystoreKey: key, RequireClientAuth: true}, "truststore: require_client_auth needs"},
		{Options{Enabled: true, Keystore: cert, KeystoreKey: key, Truststore: key}, "holds no PEM certificate"},
		{Options{Enabled: true, Keystore: cert, KeystoreKey: key, AcceptedProtocols: []string{"TLSv1.1"}}, `"TLSv1.1" is not one of TLSv1.2, TLSv1.3`},
		{Options{Enabled: true, Keystore: cert, KeystoreKey: key, CipherSuites: []string{"TLS_RSA_WITH_RC4_128_SHA"}}, "cipher_suites: \"TLS_RSA_WITH_RC4_128_SHA\" is not a secure cipher suite"},
		{Options{Enabled: true, Keystore: cert, KeystoreKey: key, StoreType: "JKS"}, `store_type: "JKS" is not supported`},
	} {
		err := c.opts.Validate("client_encryption_options")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opts, err, c.want)
		}
	}
	if err := (&Options{Enabled: true, Keystore: cert, KeystoreKey: key, Protocol: "TLSv1.3",
		CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}).Validate("x"); err != nil {
		t.Fatal(err)
	}
}

// TestDeadlinesOutliveTheHandshake: a read deadline its user set before
// the first read still holds once the handshake is done: a client that
// handshakes and then says nothing does not hold the connection forever.
func TestDeadlinesOutliveTheHandshake(t *testing.T) {
	p := newPKI(t, "ca")
	cert, key := p.Issue(t, "node")
	for _, optional := range []bool{false, true} {
		srv, err := NewServer(Options{Enabled: true, Keystore: cert, KeystoreKey: key, Optional: optional})
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		tl := srv.Listener(l)
		result := make(chan error, 1)
		go func() {
			c, err := tl.Accept()
			if err != nil {
				result <- err
				return
			}
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			_, err = c.Read(make([]byte, 1))
			result <- err
		}()
		cfg := clientConfig(t, ClientSettings{CAFile: p.CAFile, VerifyServer: true})
		c, err := tls.Dial("tcp", l.Addr().String(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		select {
		case err := <-result:
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("optional %v: the silent client's read ended with %v, want a timeout", optional, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("optional %v: the read deadline set before the handshake was lost", optional)
		}
	}
}
