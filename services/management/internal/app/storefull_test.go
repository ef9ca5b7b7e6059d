package app

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// TestStoreFull (issue 32): with etcd's NOSPACE alarm raised (its database
// over --quota-backend-bytes) reads still answer, writes answer 503 "store
// full" — never 500 — and /readyz 503 with the same words, counted in
// gatehouse_store_full_total; once the alarm is disarmed, both recover.
func TestStoreFull(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd")
	}
	t.Parallel()
	c := etcdtest.Start(t, 1)
	srv := servertest.Start(t, Serve, "", adminToken, func(cfg *config.Config) {
		cfg.Store, cfg.DBPath = config.StoreEtcd, ""
		cfg.Etcd = config.Etcd{Endpoints: c.Endpoints(), Prefix: "/gatehouse/management/"}
	})
	in := &instance{t: t, base: srv.Base, conn: srv.Conn, stop: srv.Stop}
	expect(t, "write before", in.admin("POST", "/api/apis", classicBody("f0000000000000000000000000000001", "Before")), 200, "")
	c.SetNoSpace(true)
	expect(t, "write when full", in.admin("POST", "/api/apis", classicBody("f0000000000000000000000000000002", "Full")), 503, mgmtErr("store full"))
	expect(t, "read when full", in.admin("GET", "/api/apis/f0000000000000000000000000000001", nil), 200, "")
	expect(t, "readyz when full", in.do("GET", "/readyz", "", nil), 503, mgmtErr("store full"))
	if m := in.do("GET", "/metrics", "", nil); !strings.Contains(string(m.body), "gatehouse_store_full_total ") ||
		strings.Contains(string(m.body), "gatehouse_store_full_total 0") {
		t.Error("gatehouse_store_full_total did not count the refused write")
	}
	c.SetNoSpace(false)
	expect(t, "readyz after disarm", in.do("GET", "/readyz", "", nil), 200, "")
	expect(t, "write after disarm", in.admin("POST", "/api/apis", classicBody("f0000000000000000000000000000002", "After")), 200, "")
}
