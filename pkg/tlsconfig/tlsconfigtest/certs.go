// Package tlsconfigtest makes certificate authorities and certificates in a
// test (crypto/x509, ECDSA P-256), written as PEM files in the test's
// temporary folder, for tests of TLS listeners and clients.
package tlsconfigtest

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
	"testing"
	"time"
)

// CA is a certificate authority made in the test.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate's PEM file.
	File string
}

// NewCA makes a CA named name and writes its certificate to a file.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{Cert: cert, key: key, File: filepath.Join(t.TempDir(), name+"-ca.pem")}
	write(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Pair is a certificate and key issued by a CA, as PEM files.
type Pair struct {
	Cert              *x509.Certificate
	CertFile, KeyFile string
}

// Options shape an issued certificate; the zero value is a certificate for
// 127.0.0.1 and localhost, valid from an hour ago for a day, usable by
// servers and clients.
type Options struct {
	CommonName string
	// Expired issues a certificate whose validity ended an hour ago.
	Expired bool
}

// Issue makes a certificate and key signed by ca and writes them to two
// files in a new temporary folder.
func (ca *CA) Issue(t testing.TB, o Options) *Pair {
	t.Helper()
	dir := t.TempDir()
	p := &Pair{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	p.Cert = ca.IssueTo(t, o, p.CertFile, p.KeyFile)
	return p
}

// IssueTo makes a certificate and key signed by ca and writes them to
// certFile and keyFile, replacing what they held (a rotation): each is
// written to a temporary file and renamed over, as a Kubernetes Secret
// volume swaps its files.
func (ca *CA) IssueTo(t testing.TB, o Options, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	if o.CommonName == "" {
		o.CommonName = "localhost"
	}
	key := newKey(t)
	notBefore, notAfter := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if o.Expired {
		notBefore, notAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: o.CommonName},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, keyFile, "PRIVATE KEY", keyDER)
	write(t, certFile, "CERTIFICATE", der)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// write writes one PEM block to path through a renamed temporary file.
func write(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
