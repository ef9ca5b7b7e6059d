package api

import (
	"context"

	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Identify is the active user an access key belongs to (401 otherwise),
// for a caller that holds the key outside a call's metadata: the web UI's
// sign-in and sessions. It authorizes nothing; every call the UI makes is
// still authorized by Authenticate.
func (s *Server) Identify(ctx context.Context, key string) (store.User, error) {
	return s.caller(ctx, []string{key})
}

// Permits reports whether permissions allow an RPC, by the table
// Authenticate applies: the web UI hides what a user may not do with it.
func Permits(perms map[string]string, method string) bool {
	r, ok := rules[method]
	return ok && allowed(perms, r.area, r.write)
}
