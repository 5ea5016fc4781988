package tlsconf

import (
	"crypto/tls"
	"errors"
)

// ClientSettings are what a tool connecting to a node with TLS is given:
// cqlsh's [ssl] section, or the flags of stress and cluster.
type ClientSettings struct {
	// CAFile is the PEM file of the authorities whose certificates the
	// tool trusts (cqlsh's certfile); none for the system's.
	CAFile string
	// VerifyServer checks the node's certificate (cqlsh's validate,
	// default true there): its authority, and its name against the host.
	VerifyServer bool
	// CertFile and KeyFile are the tool's own certificate and key, for a
	// node with require_client_auth (cqlsh's usercert and userkey).
	CertFile, KeyFile string
	// ServerName is the name checked against the node's certificate
	// (default: the host dialled).
	ServerName string
}

// Validate reports a certificate given without its key, or a key without
// its certificate.
func (o *ClientSettings) Validate() error {
	if (o.CertFile == "") != (o.KeyFile == "") {
		return errors.New("tls: a client certificate needs its key, and a key its certificate")
	}
	return nil
}

// ClientConfig is the tls.Config of a tool's connections.
func (o ClientSettings) ClientConfig() (*tls.Config, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName, InsecureSkipVerify: !o.VerifyServer}
	if o.CAFile != "" {
		pool, err := loadPool(o.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if o.CertFile != "" {
		pair, err := loadKeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
