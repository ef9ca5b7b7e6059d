package api

import (
	"context"
	"maps"
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/gatehouse/gatehouse/pkg/rest"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// Least privilege (CONTRACT §2): the checks the user operations make
// beyond the area permission authorize already granted. The Tyk Dashboard
// refuses permission escalation; so does this service.

var (
	errCannotGrant   = rest.Error(codes.PermissionDenied, http.StatusForbidden, "access denied: cannot grant permissions you do not hold")
	errOwnPerms      = rest.Error(codes.PermissionDenied, http.StatusForbidden, "access denied: cannot change your own permissions")
	errAdminRequired = rest.Error(codes.PermissionDenied, http.StatusForbidden, "access denied: only an admin may change an admin or another user's key")
	errHigherUser    = rest.Error(codes.PermissionDenied, http.StatusForbidden, "access denied: cannot change a user who holds permissions you do not hold")
	errLastAdmin     = rest.Error(codes.FailedPrecondition, http.StatusConflict, "at least one admin must remain")
)

// level orders an area's permission: write > read > deny or absent.
func level(v string) int {
	switch v {
	case "write":
		return 2
	case "read":
		return 1
	}
	return 0
}

// mayGrant lets a caller give perms only when it holds them: an admin
// grants anything; anyone else neither makes an admin nor gives any area a
// higher permission than its own.
func mayGrant(ctx context.Context, perms map[string]string) error {
	c, ok := Caller(ctx)
	switch {
	case !ok:
		return errUnauthorized
	case store.IsAdmin(c.Permissions):
		return nil
	case store.IsAdmin(perms):
		return errCannotGrant
	}
	for area, v := range perms {
		if area != "IsAdmin" && level(v) > level(c.Permissions[area]) {
			return errCannotGrant
		}
	}
	return nil
}

// mayChange lets the caller update (with perms, nil when they stay) or
// delete the stored user u: only an admin changes an admin, a non-admin
// changes (renames, deactivates, deletes) only users who hold nothing it
// does not hold itself, and nobody changes its own permissions.
func mayChange(ctx context.Context, u store.User, perms map[string]string) error {
	c, ok := Caller(ctx)
	switch {
	case !ok:
		return errUnauthorized
	case store.IsAdmin(u.Permissions) && !store.IsAdmin(c.Permissions):
		return errAdminRequired
	case c.ID != u.ID && mayGrant(ctx, u.Permissions) != nil:
		return errHigherUser
	case perms != nil && c.ID == u.ID && !maps.Equal(perms, u.Permissions):
		return errOwnPerms
	}
	return nil
}

// mayResetKey lets a caller reset its own key, and an admin anyone's.
func mayResetKey(ctx context.Context, id string) error {
	c, ok := Caller(ctx)
	switch {
	case !ok:
		return errUnauthorized
	case c.ID == id || store.IsAdmin(c.Permissions):
		return nil
	}
	return errAdminRequired
}
