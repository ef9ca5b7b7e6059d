package app

import (
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/metrics/metricstest"
	"github.com/gatehouse/gatehouse/services/management/internal/gateways"
	"github.com/gatehouse/gatehouse/services/management/internal/ui"
)

// TestMetrics scrapes /metrics after REST traffic and a migration: the names
// and labels of CONTRACT §5 (migration outcomes by mode among them), route
// patterns instead of paths, no API ID, key or path in any label value.
func TestMetrics(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	ids := seedClassic(t, db, 2)
	in := start(t, db)
	expect(t, "get classic", in.admin("GET", "/api/apis/"+ids[0], nil), 200, "")
	expect(t, "get missing", in.admin("GET", "/api/apis/oas/0d1e2f3a4b5c", nil), 404, "")
	expect(t, "unknown path", in.admin("GET", "/api/nowhere-7f3a", nil), 404, "")
	expect(t, "bad key", in.do("GET", "/api/apis", "wrong-key-5b1e", nil), 401, "")
	in.migrate(t, migrateBody("direct", ids[0]))
	in.migrate(t, migrateBody("direct", ids[0], "ffffffffffffffffffffffffffffffff"))

	m := metricstest.Scrape(t, in.base)
	m.CheckCommon(t, "/api/apis/{api_id}")
	m.Want(t, "gatehouse_migrate_apis_total", []string{"mode", "outcome"}, "mode", "direct", "outcome", "success")
	m.Want(t, "gatehouse_migrate_apis_total", []string{"mode", "outcome"}, "mode", "direct", "outcome", "skipped")
	// the seeded definition (convert/testdata/bench-4k.json) migrates with warnings (validate_json)
	m.Want(t, "gatehouse_migrate_apis_with_warnings_total", []string{"mode"}, "mode", "direct")
	m.CheckRoutes(t, in.base, append(gateways.Paths, ui.Prefix)...) // other tests of the process call them
	m.CheckNoSecrets(t, append(ids, adminToken, "wrong-key-5b1e", "nowhere-7f3a", "0d1e2f3a4b5c", "ffffffffffffffffffffffffffffffff")...)
}
