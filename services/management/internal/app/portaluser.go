package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/gatehouse/gatehouse/pkg/audit"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// portalPermissions are what the portal's consumer side calls: keys
// (create, read, delete) and policies (read, to check a plan's policy).
var portalPermissions = map[string]string{"keys": "write", "policy": "read"}

// ensurePortalUser makes sure, when key is set (--portal-user-key-file), that a
// management user of the portal's own holds it with portalPermissions, so
// that a deployment hands both services one Secret and the portal never
// needs an admin's key; a changed key retires the previous one (audited as
// the bootstrap token's rotation is).
func ensurePortalUser(ctx context.Context, st *store.Store, key string, log *slog.Logger, auditLog *audit.Log) error {
	if key == "" {
		return nil
	}
	retired, err := st.EnsureServiceUser(ctx, "portal", credential.Hash(key), portalPermissions)
	if errors.Is(err, store.ErrAdminKey) {
		return errors.New("--portal-user-key is an admin's key: give the portal a key of its own")
	}
	if err != nil || retired == "" {
		return err
	}
	log.Warn("a new portal key: the previous portal user was retired", "retired", retired)
	auditLog.ServiceUserRetired(ctx, "portal", retired)
	return nil
}
