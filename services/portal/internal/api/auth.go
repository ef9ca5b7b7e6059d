package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/gatehouse/gatehouse/pkg/audit/auditctx"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/metrics"
	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

var errUnauthorized = rest.Error(codes.Unauthenticated, http.StatusUnauthorized, "Not authorised")

// Authenticate admits admin API keys. The key is the whole `authorization`
// value, exactly as issued, as in Tyk's portal: no scheme word, no trimming,
// so `Bearer <key>` is another (unknown) key. The call serving a REST
// request takes the admission AuthenticateREST made from the same header
// (restfacade.Caller) instead of looking the key up again.
func (s *Server) Authenticate(ctx context.Context, fullMethod string, _ any) (context.Context, error) {
	_, method, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if _, ok := restfacade.Caller(ctx, method); ok {
		auditctx.SetCaller(ctx, AdminCaller, "") // the call's own audit entry
		return ctx, nil
	}
	if err := s.checkKey(ctx, metadata.ValueFromIncomingContext(ctx, "authorization")); err != nil {
		return nil, err
	}
	return ctx, nil
}

func (s *Server) checkKey(ctx context.Context, values []string) error {
	if len(values) != 1 || values[0] == "" {
		return errUnauthorized
	}
	hash := credential.Hash(values[0])
	ok, err := credential.Lookup(ctx, hash, func() (bool, error) { return s.store.KeyValid(ctx, hash) })
	switch {
	case err != nil:
		return s.storeError(err, errUnauthorized)
	case !ok:
		return errUnauthorized
	}
	auditctx.SetCaller(ctx, AdminCaller, "") // the portal's keys are admin keys, without a user
	return nil
}

// AdminCaller is the user_id the audit log gives the portal's admin keys.
const AdminCaller = "admin"

// AuthenticateREST checks a REST request's key before the facade reads its
// body (gateway.Options.Authenticate), with the same function as the gRPC
// hook, so REST and gRPC answer alike.
func (s *Server) AuthenticateREST(r *http.Request) error {
	err := s.checkKey(r.Context(), r.Header.Values("Authorization"))
	if err == nil {
		restfacade.SetCaller(r.Context(), AdminCaller) // the call serving the request takes it (Authenticate)
	}
	return err
}

// Precheck is the REST facade's middleware after authentication. The facade
// reads a request's body before the gRPC call, so without it a bad path ID
// would lose to a bad body: it answers 400 for a path ID that is not a
// positive integer. The gRPC server checks again with the same function.
// fail writes an error through the facade's error handler.
func (s *Server) Precheck(fail func(w http.ResponseWriter, r *http.Request, err error)) runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
			for _, k := range pathIDs {
				if v, ok := params[k.param]; ok {
					if _, ok, _ := parseID(v); !ok {
						fail(w, r, k.invalid)
						return
					}
				}
			}
			next(w, r, params)
		}
	}
}

// FrontDoor is the gRPC front door's view of the same keys: the whole
// `authorization` value, live when KeyValid says so.
func (s *Server) FrontDoor() *grpcserver.FrontDoor {
	return &grpcserver.FrontDoor{
		Key: func(authorization []string) (string, bool) {
			if len(authorization) != 1 || authorization[0] == "" {
				return "", false
			}
			return authorization[0], true
		},
		Known: func(ctx context.Context, hash []byte) (bool, error) {
			return s.store.KeyValid(ctx, hash)
		},
		Refusal: errUnauthorized,
		Refused: func() { metrics.CountAuthFailure("portal") },
	}
}
