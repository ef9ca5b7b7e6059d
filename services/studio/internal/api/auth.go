package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/services/studio/internal/store"
)

// dummyHash stands in for a missing user's key hash.
var dummyHash = credential.Hash("gatehouse: no such key")

var (
	errUnauthorized = rest.Error(codes.Unauthenticated, http.StatusUnauthorized, "missing or invalid API key")
	errNotAdmin     = rest.Error(codes.PermissionDenied, http.StatusForbidden, "admin role required")
)

// Authenticate admits admin users only: `authorization: Bearer <key>`, the
// scheme in any case, exactly one space, no other words. The call serving
// a REST request takes the admin AuthenticateREST admitted from the same
// header (restfacade.Caller) instead of looking the key up again.
func (s *Server) Authenticate(ctx context.Context, fullMethod string, _ any) (context.Context, error) {
	_, method, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if c, ok := restfacade.Caller(ctx, method); ok {
		if u, ok := c.(store.User); ok {
			setCaller(ctx, u) // the call's own audit entry
			return ctx, nil
		}
	}
	_, err := s.checkAdmin(ctx, metadata.ValueFromIncomingContext(ctx, "authorization"))
	return ctx, err
}

// AuthenticateREST applies the same check to a REST request before the facade
// reads its body (gateway.Options.Authenticate), so a caller without a key is
// refused before learning anything about its body; the admin it admits is
// kept for the call that serves the request (restfacade.SetCaller).
func (s *Server) AuthenticateREST(r *http.Request) error {
	u, err := s.checkAdmin(r.Context(), r.Header.Values("Authorization"))
	if err == nil {
		restfacade.SetCaller(r.Context(), u)
	}
	return err
}

func (s *Server) checkAdmin(ctx context.Context, authorization []string) (store.User, error) {
	key, ok := bearerKey(authorization)
	if !ok {
		return store.User{}, errUnauthorized
	}
	hash := credential.Hash(key)
	u, err := credential.Lookup(ctx, hash, func() (store.User, error) { return s.store.UserByKeyHash(ctx, hash) })
	switch {
	case errors.Is(err, store.ErrNotFound):
		credential.Equal(dummyHash, hash) // an unknown key costs what a known one does
		return store.User{}, errUnauthorized
	case err == nil && !credential.Equal(u.KeyHash, hash):
		return store.User{}, errUnauthorized
	case err != nil:
		return store.User{}, s.status(err, errUnauthorized)
	}
	setCaller(ctx, u)
	if !u.IsAdmin {
		return store.User{}, errNotAdmin
	}
	return u, nil
}

// setCaller names u in ctx's audit entry.
func setCaller(ctx context.Context, u store.User) {
	auditctx.SetCaller(ctx, strconv.FormatUint(uint64(u.ID), 10), u.Email)
}

func bearerKey(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, key, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" || strings.ContainsAny(key, " \t") {
		return "", false
	}
	return key, true
}

// FrontDoor is the gRPC front door's view of the same keys: the hash of
// a well-formed `Bearer <key>`, live when a user holds it (the full check
// above still decides on admin).
func (s *Server) FrontDoor() *grpcserver.FrontDoor {
	return &grpcserver.FrontDoor{
		Key: bearerKey,
		Known: func(ctx context.Context, hash []byte) (bool, error) {
			_, err := s.store.UserByKeyHash(ctx, hash)
			return credential.Found(err, store.ErrNotFound)
		},
		Refusal: errUnauthorized,
		Refused: func() { metrics.CountAuthFailure("studio") },
	}
}
