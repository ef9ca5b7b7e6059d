package grpcserver

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/kv"
)

// FrontDoor authenticates a gRPC stream in the transport, before the
// stream exists and so before its message is read or decompressed
// (grpc.InTapHandle): a call without a live key costs the server its
// headers only. It reads the `authorization` metadata alone and looks the
// key up in the store for every stream (at most LookupTimeout, in the
// connection's reader, so only that connection waits), as a kv.Recent View
// allowed KeyStaleness: on bbolt a read transaction, on etcd the watch
// cache's snapshot from memory (with one quorum read per KeyStaleness to
// know it is that fresh). So a key deleted, deactivated or reset through
// any replica is refused by every replica's front door — its message
// unread — once KeyStaleness has passed (issue 32; it was a minute, then
// a second), and at once by a replica whose own store has said so. It is
// the cheap front door, not the authority: the service's AuthFunc still
// checks every call.
type FrontDoor struct {
	// Key reads the key of the authorization values in the service's own
	// form; false when there is none or it is malformed.
	Key func(authorization []string) (string, bool)
	// Known reports whether hash is a live key's: a store read, with ctx
	// (which carries kv.Recent).
	Known func(ctx context.Context, hash []byte) (bool, error)
	// Refusal is the service's Unauthenticated error, the same the AuthFunc
	// returns for a missing or unknown key.
	Refusal error
	// Refused, when set, is called for every stream refused for its
	// credentials (the service counts them: gatehouse_auth_failures_total).
	Refused func()
}

// KeyStaleness is how old a view of the keys the front door may read
// (kv.Recent); LookupTimeout bounds its store read.
const (
	KeyStaleness  = 500 * time.Millisecond
	LookupTimeout = time.Second
)

// errStoreUnavailable answers a stream whose key could not be checked.
var errStoreUnavailable = status.Error(codes.Unavailable, "store unavailable")

// openMethod tells whether a method needs no credentials: gRPC health and
// server reflection.
func openMethod(fullMethod string) bool { return strings.HasPrefix(fullMethod, "/grpc.") }

// tap is the grpc.InTapHandle.
func (d *FrontDoor) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if openMethod(info.FullMethodName) {
		return ctx, nil
	}
	hash, ok := d.keyHash(info.Header.Get("authorization"))
	if !ok {
		return nil, d.refuse()
	}
	lookup, cancel := context.WithTimeout(kv.Recent(ctx, KeyStaleness), LookupTimeout)
	defer cancel()
	live, err := d.Known(lookup, hash)
	switch {
	case err != nil:
		return nil, errStoreUnavailable
	case !live:
		return nil, d.refuse()
	}
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
