package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Options are an encryption options block of cassandra.yaml, with its
// keys. Certificates and keys are PEM files, as Cassandra 4.1's
// PEMBasedSslContextFactory reads them: the keystore holds the
// certificate chain and its private key (one file, or the key in
// KeystoreKey), the truststore the certificates of the authorities
// trusted.
type Options struct {
	Enabled bool `yaml:"enabled"`
	// Optional takes plaintext and TLS connections on the same port.
	Optional bool `yaml:"optional"`
	// Keystore is the PEM file of the certificate chain, and of the
	// private key unless KeystoreKey names another file.
	Keystore    string `yaml:"keystore"`
	KeystoreKey string `yaml:"keystore_key"`
	// KeystorePassword would decrypt an encrypted key; such keys are
	// refused (legacy PEM encryption is insecure): give an unencrypted
	// key whose file only the node can read.
	KeystorePassword string `yaml:"keystore_password"`
	// RequireClientAuth asks every client for a certificate signed by an
	// authority of the truststore.
	RequireClientAuth bool   `yaml:"require_client_auth"`
	Truststore        string `yaml:"truststore"`
	// TruststorePassword is taken for cassandra.yaml's sake; a PEM
	// truststore has no password.
	TruststorePassword string `yaml:"truststore_password"`
	// StoreType is store_type: PEM (default); JKS and PKCS12 are refused.
	StoreType string `yaml:"store_type"`
	// Protocol is protocol: TLS (default: TLSv1.2 and TLSv1.3), TLSv1.2 or
	// TLSv1.3; AcceptedProtocols, when given, lists them instead.
	Protocol          string   `yaml:"protocol"`
	AcceptedProtocols []string `yaml:"accepted_protocols"`
	// CipherSuites are the TLS 1.2 cipher suites allowed, by their IANA
	// names (as Java names them); none for Go's secure default. TLS 1.3's
	// are always its own.
	CipherSuites []string `yaml:"cipher_suites"`
}

// EnsureDefaults fills unset fields: PEM files, TLS 1.2 and 1.3.
func (o *Options) EnsureDefaults() {
	if o.StoreType == "" {
		o.StoreType = "PEM"
	}
	if o.Protocol == "" {
		o.Protocol = "TLS"
	}
}

// versions are the protocol names taken, oldest first.
var versions = []struct {
	name string
	v    uint16
}{{"TLSv1.2", tls.VersionTLS12}, {"TLSv1.3", tls.VersionTLS13}}

// Validate reports every problem with the options, each naming key (the
// block's name in cassandra.yaml) and the setting. Files are read: a
// certificate that does not load is refused at start-up, not at the
// first connection.
func (o *Options) Validate(key string) error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(key+"."+format, args...))
	}
	switch strings.ToUpper(o.StoreType) {
	case "", "PEM":
	default:
		bad("store_type: %q is not supported: give PEM files (convert a JKS or PKCS12 store with keytool and openssl)", o.StoreType)
	}
	if o.Keystore == "" {
		bad("keystore: TLS is enabled and no keystore names the certificate and key")
	} else if _, err := loadKeyPair(o.Keystore, o.KeystoreKey); err != nil {
		bad("keystore: %v", err)
	}
	if o.RequireClientAuth && o.Truststore == "" {
		bad("truststore: require_client_auth needs the authorities that sign client certificates")
	}
	if o.Truststore != "" {
		if _, err := loadPool(o.Truststore); err != nil {
			bad("truststore: %v", err)
		}
	}
	if _, _, err := o.versionRange(); err != nil {
		bad("%v", err)
	}
	if _, err := o.suites(); err != nil {
		bad("cipher_suites: %v", err)
	}
	return errors.Join(errs...)
}

// versionRange is the lowest and highest protocol version allowed.
func (o *Options) versionRange() (uint16, uint16, error) {
	names := o.AcceptedProtocols
	if len(names) == 0 {
		switch o.Protocol {
		case "", "TLS":
			return tls.VersionTLS12, tls.VersionTLS13, nil
		}
		names = []string{o.Protocol}
	}
	var lo, hi uint16
	for _, n := range names {
		i := slices.IndexFunc(versions, func(v struct {
			name string
			v    uint16
		}) bool {
			return strings.EqualFold(v.name, n)
		})
		if i < 0 {
			return 0, 0, fmt.Errorf("protocols: %q is not one of TLSv1.2, TLSv1.3 (older versions are refused)", n)
		}
		if lo == 0 || versions[i].v < lo {
			lo = versions[i].v
		}
		hi = max(hi, versions[i].v)
	}
	return lo, hi, nil
}

// suites are the cipher suites named, nil for Go's default.
func (o *Options) suites() ([]uint16, error) {
	var out []uint16
	for _, name := range o.CipherSuites {
		i := slices.IndexFunc(tls.CipherSuites(), func(c *tls.CipherSuite) bool { return c.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%q is not a secure cipher suite Go knows (IANA names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)", name)
		}
		out = append(out, tls.CipherSuites()[i].ID)
	}
	return out, nil
}

// loadKeyPair reads a certificate chain and its key from one PEM file, or
// the key from another.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM := certPEM
	if keyFile != "" {
		if keyPEM, err = os.ReadFile(keyFile); err != nil {
			return tls.Certificate{}, err
		}
	}
	for rest := keyPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] != "" {
			return tls.Certificate{}, errors.New("the private key is encrypted: give it unencrypted, readable by the node alone")
		}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("%s: %w", certFile, err)
	}
	return pair, nil
}

// loadPool reads the PEM certificates of a truststore.
func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}
