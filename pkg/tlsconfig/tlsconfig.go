// Package tlsconfig makes the TLS settings of Gatehouse's listeners and of
// its internal gRPC clients from PEM files. A server's certificate and key,
// and the CA it checks client certificates with, are read again at the
// next handshake after a file changed (another file renamed over it, or its
// modification time or size changed): rotating a certificate is replacing
// its files, without a restart. A rotation caught half way (a new
// certificate beside the old key) keeps the last good pair in use until
// both files match.
package tlsconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
)

// MinVersion is the oldest TLS version served or spoken: TLS 1.2.
const MinVersion = tls.VersionTLS12

// Server is the TLS configuration of a listener serving the certificate
// and key in certFile and keyFile. With clientCAFile it also requires a
// client certificate signed by a CA in that file (mTLS). The files are read
// now, so that a start with bad files fails at once, and again whenever
// one changes. nextProtos are the ALPN protocols offered (gRPC's
// credentials add "h2" themselves; HTTP listeners give "http/1.1").
func Server(certFile, keyFile, clientCAFile string, nextProtos ...string) (*tls.Config, error) {
	pair, err := newWatched([]string{certFile, keyFile}, loadPair)
	if err != nil {
		return nil, err
	}
	base := &tls.Config{
		MinVersion:     MinVersion,
		NextProtos:     nextProtos,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return pair.get() },
	}
	if clientCAFile == "" {
		return base, nil
	}
	cas, err := newWatched([]string{clientCAFile}, loadPool)
	if err != nil {
		return nil, err
	}
	base.ClientAuth = tls.RequireAndVerifyClientCert
	base.ClientCAs, _ = cas.get()
	// Each handshake gets the CA pool as it is now.
	return &tls.Config{
		MinVersion: MinVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			pool, err := cas.get()
			if err != nil {
				return nil, err
			}
			c := base.Clone()
			c.ClientCAs = pool
			return c, nil
		},
	}, nil
}

// Client is the TLS configuration of a client of a Gatehouse service:
// the server's certificate is verified against the CAs in caFile (empty:
// the system's roots), and with certFile and keyFile the client presents
// that certificate (for a server that requires one); the pair is read again
// when a file changes, the CA file only now (ClientCredentials, for gRPC
// clients, reads it again too).
func Client(caFile, certFile, keyFile string) (*tls.Config, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a client certificate and its key go together")
	}
	c := &tls.Config{MinVersion: MinVersion}
	if caFile != "" {
		pool, err := loadPool([]string{caFile})
		if err != nil {
			return nil, err
		}
		c.RootCAs = pool
	}
	if certFile != "" {
		pair, err := newWatched([]string{certFile, keyFile}, loadPair)
		if err != nil {
			return nil, err
		}
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return pair.get() }
	}
	return c, nil
}

// loadPair reads a certificate and its key.
func loadPair(files []string) (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(files[0], files[1])
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w", files[0], files[1], err)
	}
	return &pair, nil
}

// loadPool reads a file of PEM CA certificates.
func loadPool(files []string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(files[0])
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", files[0])
	}
	return pool, nil
}

// stamp is what tells that a file changed: the file itself (a file renamed
// over it, as Kubernetes swaps a Secret volume's files, is another), its
// modification time and its size.
type stamp struct {
	fi os.FileInfo
}

// watched is a value read from files, read again when one of them has
// changed since the last good read.
type watched[T any] struct {
	files []string
	load  func([]string) (T, error)

	mu     sync.Mutex
	stamps []stamp
	value  T
}

func newWatched[T any](files []string, load func([]string) (T, error)) (*watched[T], error) {
	for _, f := range files {
		if f == "" {
			return nil, errors.New("a TLS certificate and its key go together")
		}
	}
	w := &watched[T]{files: files, load: load}
	if _, err := w.get(); err != nil {
		return nil, err
	}
	return w, nil
}

// get returns the value, first read again if a file changed. A read that
// fails keeps the last good value (a rotation in progress: the next
// handshake tries again); there is none only at the first read.
func (w *watched[T]) get() (T, error) {
	now := make([]stamp, len(w.files))
	for i, f := range w.files {
		if fi, err := os.Stat(f); err == nil {
			now[i] = stamp{fi}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stamps != nil && equal(now, w.stamps) {
		return w.value, nil
	}
	v, err := w.load(w.files)
	if err != nil {
		if w.stamps != nil {
			return w.value, nil
		}
		return v, err
	}
	w.value, w.stamps = v, now
	return v, nil
}

func equal(a, b []stamp) bool {
	for i := range a {
		x, y := a[i].fi, b[i].fi
		if x == nil || y == nil || !os.SameFile(x, y) || !x.ModTime().Equal(y.ModTime()) || x.Size() != y.Size() {
			return false
		}
	}
	return true
}
