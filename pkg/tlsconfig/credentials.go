package tlsconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"

	"google.golang.org/grpc/credentials"
)

// ClientCredentials are the transport credentials of a gRPC client of a
// Gatehouse service (the portal calling management): Client's settings, but
// the CA file too is read again at the next handshake after it changed, so
// that a server whose certificate was rotated to a new CA is reached again
// once the CA file is replaced, without a restart. A CA file that cannot be
// read keeps the last good one (a rotation in progress).
func ClientCredentials(caFile, certFile, keyFile string) (credentials.TransportCredentials, error) {
	base, err := Client("", certFile, keyFile)
	if err != nil {
		return nil, err
	}
	if caFile == "" {
		return credentials.NewTLS(base), nil
	}
	cas, err := newWatched([]string{caFile}, loadPool)
	if err != nil {
		return nil, err
	}
	return &watchedRoots{base: base, cas: cas}, nil
}

// watchedRoots verifies each handshake's server against the CA pool as it
// is at that handshake; the handshake itself is gRPC's own TLS one.
type watchedRoots struct {
	base *tls.Config
	cas  *watched[*x509.CertPool]
}

func (w *watchedRoots) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	pool, err := w.cas.get()
	if err != nil {
		return nil, nil, err
	}
	c := w.base.Clone()
	c.RootCAs = pool
	return credentials.NewTLS(c).ClientHandshake(ctx, authority, raw)
}

func (w *watchedRoots) ServerHandshake(net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("tlsconfig: client credentials cannot serve")
}

func (w *watchedRoots) Info() credentials.ProtocolInfo { return credentials.NewTLS(w.base).Info() }

func (w *watchedRoots) Clone() credentials.TransportCredentials {
	return &watchedRoots{base: w.base.Clone(), cas: w.cas}
}

// OverrideServerName is gRPC's deprecated way to set the name verified.
func (w *watchedRoots) OverrideServerName(name string) error {
	w.base.ServerName = name
	return nil
}
