package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/server"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// TestPortalUser: --portal-user-key gives the portal a management user of its
// own, allowed keys: write and policy: read and nothing else; restarts keep
// it (restored when an admin changed its rights); a new key retires the old
// one (audited); an admin's key is refused at start.
func TestPortalUser(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	const first, second = "portal-key-0123456789abcdef-first", "portal-key-0123456789abcdef-second"
	withKey := func(key string) func(*config.Config) { return func(c *config.Config) { c.PortalUserKey = key } }
	start := func(key string) (*servertest.Instance, *instance) {
		s := servertest.Start(t, Serve, db, adminToken, withKey(key))
		return s, &instance{t: t, base: s.Base}
	}
	s, in := start(first)
	expect(t, "the portal key reads policies", in.do("GET", "/api/portal/policies?p=1", first, nil), 200, "")
	expect(t, "the portal key creates no API", in.do("POST", "/api/apis", first, []byte(`{"api_definition":{"name":"x"}}`)), 403, "")
	expect(t, "the portal key lists no users", in.do("GET", "/api/users", first, nil), 403, "")
	expect(t, "the portal key writes no policy", in.do("POST", "/api/portal/policies", first, []byte(`{"name":"p","rate":1,"per":1}`)), 403, "")
	// an admin widens it; the next start gives it back exactly its rights
	var uid string
	for _, u := range in.admin("GET", "/api/users?p=0", nil).json(t)["users"].([]any) {
		if u := u.(map[string]any); strings.HasPrefix(u["email_address"].(string), "portal-service") {
			uid = u["id"].(string)
		}
	}
	if uid == "" {
		t.Fatal("no portal-service user")
	}
	expect(t, "an admin makes the portal user an API writer", in.admin("PUT", "/api/users/"+uid, `{"user_permissions":{"apis":"write","keys":"write","policy":"read"}}`), 200, "")
	s.Stop()
	s, in = start(first)
	expect(t, "restarted: the portal key creates no API", in.do("POST", "/api/apis", first, []byte(`{"api_definition":{"name":"x"}}`)), 403, "")
	expect(t, "restarted: the portal key reads policies", in.do("GET", "/api/portal/policies?p=1", first, nil), 200, "")
	s.Stop()
	_, in = start(second)
	expect(t, "the old portal key after a new one", in.do("GET", "/api/portal/policies?p=1", first, nil), 401, "")
	expect(t, "the new portal key", in.do("GET", "/api/portal/policies?p=1", second, nil), 200, "")
	r := in.admin("GET", "/api/audit-logs?p=0&user_id=service", nil)
	if n := strings.Count(string(r.body), "RETIRE portal service credential"); n != 1 {
		t.Errorf("%d portal key retirements audited, want 1: %s", n, r.body)
	}
	users := in.admin("GET", "/api/users?p=0", nil).json(t)["users"].([]any)
	if len(users) != 2 {
		t.Errorf("users after a new portal key: %v, want the bootstrap admin and one portal user", users)
	}
}

// TestPortalKeyAdminRefused: the bootstrap admin's key given as the portal's
// stops the start (the admin is never demoted).
func TestPortalKeyAdminRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	servertest.Start(t, Serve, db, adminToken).Stop()
	cfg := config.Config{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", DBPath: db, BootstrapToken: adminToken, PortalUserKey: adminToken}
	l, err := server.Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = Serve(ctx, slog.New(slog.DiscardHandler), l, cfg)
	if err == nil || !strings.Contains(err.Error(), "admin's key") {
		t.Fatalf("start with the admin's key as the portal's: %v, want a refusal", err)
	}
}
