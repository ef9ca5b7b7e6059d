package grpcserver

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/gatehouse/gatehouse/pkg/credential"
)

// FrontDoor authenticates a gRPC stream in the transport, before the
// stream exists and so before its message is read or decompressed
// (grpc.InTapHandle): a call without a live key costs the server its
// headers only. It reads the `authorization` metadata alone and answers from
// memory — a set of key hashes found live in the last VerifiedTTL — and only
// for a key not in the set reads the store once (at most LookupTimeout, in
// the connection's reader, so only that connection waits). It is the cheap
// front door, not the authority: the service's AuthFunc still checks every
// call, and a key it refuses is dropped from the set. VerifiedTTL is one
// second, so a key deleted, deactivated or reset on any replica is refused
// by every replica's front door — its message unread — within a second
// (issue 32; it was a minute): a key in use costs one store read a second
// per replica.
type FrontDoor struct {
	// Key reads the key of the authorization values in the service's own
	// form; false when there is none or it is malformed.
	Key func(authorization []string) (string, bool)
	// Known reports whether hash is a live key's (a store read).
	Known func(ctx context.Context, hash []byte) (bool, error)
	// Refusal is the service's Unauthenticated error, the same the AuthFunc
	// returns for a missing or unknown key.
	Refusal error
	// Refused, when set, is called for every stream refused for its
	// credentials (the service counts them: gatehouse_auth_failures_total).
	Refused func()

	verified *credential.Verified
}

// How many key hashes the front door keeps, and for how long: a key used
// again within VerifiedTTL passes without a store read.
const (
	VerifiedKeys  = 4096
	VerifiedTTL   = time.Second
	LookupTimeout = time.Second
)

// errStoreUnavailable answers a stream whose key could not be checked.
var errStoreUnavailable = status.Error(codes.Unavailable, "store unavailable")

// openMethod tells whether a method needs no credentials: gRPC health and
// server reflection.
func openMethod(fullMethod string) bool { return strings.HasPrefix(fullMethod, "/grpc.") }

func (d *FrontDoor) init() {
	if d.verified == nil {
		d.verified = credential.NewVerified(VerifiedKeys, VerifiedTTL)
	}
}

// tap is the grpc.InTapHandle.
func (d *FrontDoor) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if openMethod(info.FullMethodName) {
		return ctx, nil
	}
	hash, ok := d.keyHash(info.Header.Get("authorization"))
	if !ok {
		return nil, d.refuse()
	}
	if d.verified.Has(hash) {
		return ctx, nil
	}
	lookup, cancel := context.WithTimeout(ctx, LookupTimeout)
	defer cancel()
	live, err := d.Known(lookup, hash)
	switch {
	case err != nil:
		return nil, errStoreUnavailable
	case !live:
		return nil, d.refuse()
	}
	d.verified.Add(hash)
	return ctx, nil
}

// refuse counts a refusal and returns the service's error for it.
func (d *FrontDoor) refuse() error {
	if d.Refused != nil {
		d.Refused()
	}
	return d.Refusal
}

// keyHash is the stored hash of the key in authorization.
func (d *FrontDoor) keyHash(authorization []string) ([]byte, bool) {
	key, ok := d.Key(authorization)
	if !ok {
		return nil, false
	}
	return credential.Hash(key), true
}

// forget drops the key of a call the AuthFunc refused as unauthenticated.
func (d *FrontDoor) forget(ctx context.Context) {
	if hash, ok := d.keyHash(metadata.ValueFromIncomingContext(ctx, "authorization")); ok {
		d.verified.Forget(hash)
	}
}
