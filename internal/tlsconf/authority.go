package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Authority is a certificate authority and the certificates it signs,
// kept as PEM files in a directory: the TLS of a local cluster (sibyl
// cluster --ssl) and of tests. Its key stays in memory.
type Authority struct {
	Dir    string
	CAFile string // the authority's certificate
	ca     *x509.Certificate
	key    *ecdsa.PrivateKey
	serial int64
}

// certificateLife is how long the certificates made here are valid.
const certificateLife = 10 * 365 * 24 * time.Hour

// NewAuthority makes an authority named name, its certificate written to
// dir (created if need be).
func NewAuthority(dir, name string) (*Authority, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certificateLife),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	a := &Authority{Dir: dir, ca: ca, key: key, serial: 1}
	if a.CAFile, err = a.write(name+"-ca.crt", "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Authority) write(name, kind string, der []byte) (string, error) {
	path := filepath.Join(a.Dir, name)
	return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

// Issue makes a certificate for name, good for a server and a client at
// 127.0.0.1 to 127.0.0.255 and localhost (the addresses of a local
// cluster), and returns its certificate and key files.
func (a *Authority) Issue(name string) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	a.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(a.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certificateLife),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"}}
	for i := 1; i < 256; i++ {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.IPv4(127, 0, 0, byte(i)))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.ca, &key.PublicKey, a.key)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	if certFile, err = a.write(name+".crt", "CERTIFICATE", der); err != nil {
		return "", "", err
	}
	keyFile, err = a.write(name+".key", "PRIVATE KEY", keyDER)
	return certFile, keyFile, err
}
