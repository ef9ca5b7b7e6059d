package app

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// The web UI's goals (issue 28): a page of 50 APIs from a store of 10,000
// in at most 50 ms, the dry-run view of 100 APIs in at most 1 s. Each is
// one request from a signed-in browser's cookies to the answer's last
// byte, on loopback.

func uiBench(b *testing.B, n int) (*uiClient, []string) {
	b.Helper()
	db := filepath.Join(b.TempDir(), "management.db")
	ids := seedClassic(b, db, n)
	in := start(b, db)
	c := newUIClient(b, in.base)
	c.login(adminToken)
	return c, ids
}

func benchPage(b *testing.B, c *uiClient, method, path string, form url.Values, want string) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		r := c.do(method, path, form)
		if r.status != 200 || !strings.Contains(r.body, want) {
			b.Fatalf("%s %s: %d, want 200 with %q", method, path, r.status, want)
		}
	}
}

// BenchmarkUIAPIsPage10k is page 100 of 200 (APIs 4,951–5,000).
func BenchmarkUIAPIsPage10k(b *testing.B) {
	c, ids := uiBench(b, 10000)
	benchPage(b, c, "GET", "/ui/apis?p=100", nil, ids[4999])
}

// BenchmarkUIAPIsSearch10k searches the 10,000 APIs by listen path
// (SearchAPIs reads every record's header, and its listen path since no
// name or ID matches; only the match is decoded).
func BenchmarkUIAPIsSearch10k(b *testing.B) {
	c, ids := uiBench(b, 10000)
	benchPage(b, c, "GET", "/ui/apis?q=/seeded-4999/", nil, ids[4999])
}

// BenchmarkUIAPIsKind10k is page 100 of the classic APIs (all 10,000):
// five SearchAPIs pages, each a scan of the records' headers.
func BenchmarkUIAPIsKind10k(b *testing.B) {
	c, ids := uiBench(b, 10000)
	benchPage(b, c, "GET", "/ui/apis?kind=classic&p=100", nil, ids[4999])
}

// BenchmarkUIAPIsActive10k is page 100 of the active APIs (all 10,000):
// five SearchAPIs pages, each reading every record's active member.
func BenchmarkUIAPIsActive10k(b *testing.B) {
	c, ids := uiBench(b, 10000)
	benchPage(b, c, "GET", "/ui/apis?active=yes&p=100", nil, ids[4999])
}

// BenchmarkUIDryRun100 is the dry run of 100 classic APIs (4 KB
// definitions with warnings) and its page: each API's classic definition
// beside its Tyk OAS document, marked.
func BenchmarkUIDryRun100(b *testing.B) {
	c, ids := uiBench(b, 100)
	form := url.Values{"csrf_token": {c.csrf()}, "mode": {"dryRun"}, "apiIDs": ids}
	benchPage(b, c, "POST", "/ui/migrate", form, "100 migrated (nothing stored)")
}
