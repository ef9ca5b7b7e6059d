package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// searchIDs lists the API IDs of a `{"apis":[..],"pages":n}` answer, in
// order, and its pages.
func searchIDs(t *testing.T, r resp) (string, int) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var v struct {
		APIs []struct {
			Def struct {
				APIID string `json:"api_id"`
			} `json:"api_definition"`
		} `json:"apis"`
		Pages *int `json:"pages"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil || v.APIs == nil || v.Pages == nil {
		t.Fatalf("not {\"apis\":[..],\"pages\":n}: %v: %s", err, r.body)
	}
	var ids []string
	for _, a := range v.APIs {
		ids = append(ids, a.Def.APIID)
	}
	return strings.Join(ids, ","), *v.Pages
}

// TestDashboardAPISearch restates the dashboard SDK's searchApis
// (APIsAPIService.SearchApis with q and p: GET /api/apis/search, "a list of
// APIs whose names match q; without q all APIs; paginated; p < 0 all"),
// answered as GET /api/apis answers (ApiDefinitionsResponse), and
// management's own filters kind, active, category and fields and its
// page_size.
func TestDashboardAPISearch(t *testing.T) {
	in := start(t, "")
	classic := func(id, name, listen string, active bool) string {
		return fmt.Sprintf(`{"api_definition":{"api_id":%q,"name":%q,"active":%t,"proxy":{"listen_path":%q,"target_url":"http://u.test"}}}`, id, name, active, listen)
	}
	for _, body := range []string{
		classic("c1", "Orders #shop", "/orders/", true),
		classic("c2", "Old ORDERS", "/legacy/", false),
		classic("c3", "Legacy (v1) a.c", "/v1/", true),
		classic("c4", "Payments #shop", "/pay/", true),
	} {
		expect(t, "create classic", in.admin("POST", "/api/apis", body), 200, "")
	}
	expect(t, "create oas", in.admin("POST", "/api/apis/oas", oasDoc("o1", "Orders OAS", "/orders-oas/")), 200, "")
	inactive := strings.Replace(oasDoc("o2", "Stock", "/stock/"), `"active":true`, `"active":false`, 1)
	expect(t, "create oas", in.admin("POST", "/api/apis/oas", inactive), 200, "")
	dbID := in.admin("GET", "/api/apis/c4", nil).json(t)["api_definition"].(map[string]any)["id"].(string)

	for _, c := range []struct {
		query, want string
	}{
		{"", "c1,c2,c3,c4,o1,o2"},                  // without q every API, in API ID order
		{"?q=orders", "c1,c2,o1"},                  // a part of the name, any case
		{"?q=%20ORDERS%20", "c1,c2,o1"},            // surrounding spaces ignored
		{"?q=shop", "c1,c4"},                       // a category token is part of the name
		{"?q=a.c", "c3"},                           // as text: . is a dot
		{"?q=(v1", "c3"},                           // no q is an invalid pattern
		{"?q=[", ""},                               // nor this one
		{"?q=/orders/", ""},                        // the name only, unless fields says more
		{"?q=/orders&fields=listen_path", "c1,o1"}, // the listen path, classic and OAS
		{"?q=O1&fields=api_id", "o1"},              // the API ID
		{"?q=" + dbID + "&fields=api_id", "c4"},    // or its db id
		{"?q=legacy&fields=name,listen_path", "c2,c3"},
		{"?q=O&fields=api_id", "o1,o2"},
		{"?kind=oas", "o1,o2"},
		{"?kind=classic&q=orders", "c1,c2"},
		{"?active=true", "c1,c3,c4,o1"},
		{"?active=false", "c2,o2"},
		{"?category=shop", "c1,c4"},
		{"?category=shop,nothing&q=pay", "c4"},
		{"?q=nothing", ""},
	} {
		if got, _ := searchIDs(t, in.admin("GET", "/api/apis/search"+c.query, nil)); got != c.want {
			t.Errorf("GET /api/apis/search%s: %q, want %q", c.query, got, c.want)
		}
	}

	// the items are GET /api/apis's, byte for byte
	all := in.admin("GET", "/api/apis?p=0", nil)
	found := in.admin("GET", "/api/apis/search?p=0", nil)
	if string(all.body) != string(found.body) {
		t.Errorf("search without q:\n%s\nlist:\n%s", found.body, all.body)
	}

	// pages of 10, as GET /api/apis; p unset is 1, p <= 0 every match
	for i := range 15 {
		expect(t, "fill", in.admin("POST", "/api/apis", classic(fmt.Sprintf("f%02d", i), fmt.Sprintf("Fill %d", i), fmt.Sprintf("/fill%d/", i), true)), 200, "")
	}
	for _, c := range []struct {
		query       string
		items, page int
	}{
		{"?q=fill", 10, 2},
		{"?q=FILL&p=1", 10, 2},
		{"?q=fill&p=2", 5, 2},
		{"?q=fill&p=3", 0, 2},
		{"?q=fill&p=-1", 15, 2},
		{"?q=fill&p=0", 15, 2},
		{"?q=nothing&p=-1", 0, 0},
		{"?p=3", 1, 3},
		{"?q=fill&page_size=4&p=4", 3, 4}, // management's own page length
		{"?q=fill&page_size=100", 15, 1},
		{"?q=fill&page_size=4&p=0", 15, 4},
	} {
		ids, pages := searchIDs(t, in.admin("GET", "/api/apis/search"+c.query, nil))
		if n := len(strings.FieldsFunc(ids, func(r rune) bool { return r == ',' })); n != c.items || pages != c.page {
			t.Errorf("GET /api/apis/search%s: %d APIs, pages %d; want %d, %d", c.query, n, pages, c.items, c.page)
		}
	}

	// a bad parameter is 400 and names itself
	for _, c := range []struct{ query, msg string }{
		{"?p=x", "p must be an integer"},
		{"?kind=graphql", "kind must be classic or oas"},
		{"?active=yes", "active must be true or false"},
		{"?fields=body", "fields must list name, listen_path or api_id"},
		{"?page_size=0", "page_size must be 1 to 100"},
		{"?page_size=101", "page_size must be 1 to 100"},
		{"?page_size=ten", "page_size must be an integer"},
	} {
		expect(t, "search"+c.query, in.admin("GET", "/api/apis/search"+c.query, nil), 400, mgmtErr(c.msg))
	}

	// area apis, read; refused before anything is read, as every route
	_, noAPIs := in.createUser(`{"users":"read"}`)
	expect(t, "search without apis read", in.do("GET", "/api/apis/search?q=orders", noAPIs, nil), 403,
		mgmtErr("access denied: You do not have permission to access /api/apis/search"))
	_, reader := in.createUser(`{"apis":"read"}`)
	if got, _ := searchIDs(t, in.do("GET", "/api/apis/search?q=orders", reader, nil)); got != "c1,c2,o1" {
		t.Errorf("apis:read search: %q", got)
	}

	// gRPC answers the same bytes as REST (which streams p <= 0)
	for _, c := range []struct {
		query string
		req   *managementv1.SearchAPIsRequest
	}{
		{"?q=orders&p=-1", &managementv1.SearchAPIsRequest{Q: "orders", P: proto.Int64(-1)}},
		{"?q=fill&p=2", &managementv1.SearchAPIsRequest{Q: "fill", P: proto.Int64(2)}},
		{"?q=fill&p=-1&page_size=4", &managementv1.SearchAPIsRequest{Q: "fill", P: proto.Int64(-1), PageSize: proto.Int64(4)}},
		{"?kind=oas&fields=listen_path&q=/", &managementv1.SearchAPIsRequest{Kind: "oas", Fields: "listen_path", Q: "/"}},
	} {
		r := in.admin("GET", "/api/apis/search"+c.query, nil)
		whole, err := in.client.SearchAPIs(grpcCtx(adminToken), c.req)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(r.body), string(whole.GetBody().GetData()); got != want {
			t.Errorf("%s REST:\n%.400s\ngRPC:\n%.400s", c.query, got, want)
		}
	}
}

// TestAPISearchStreams: GET /api/apis/search?p=-1 over 10,000 classic APIs
// of about 4 KB (some 40 MB of definitions) answers every match written as
// it is read: the heap grows by at most 16 MiB while it is answered.
func TestAPISearchStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a store")
	}
	db := filepath.Join(t.TempDir(), "management.db")
	ids := seedClassic(t, db, 10000)
	in := start(t, db)
	peak, size := servertest.GETPeak(t, in.base+"/api/apis/search?q=seeded&p=-1", adminToken)
	if size < 10000*1024 {
		t.Fatalf("answered %d bytes, want every API's definition", size)
	}
	if peak > 16<<20 {
		t.Errorf("heap grew by %.1f MiB answering %.1f MiB, want at most 16 MiB", float64(peak)/(1<<20), float64(size)/(1<<20))
	}
	got, pages := searchIDs(t, in.admin("GET", "/api/apis/search?q=API+4999+%23&p=1", nil))
	if got != ids[4999] || pages != 1 {
		t.Errorf("q=API 4999 #: %q of %d pages, want %s", got, pages, ids[4999])
	}
}

// BenchmarkAPISearch10k is GET /api/apis/search over 10,000 classic APIs of
// about 4 KB: by name (decided from each record's header), a late page of a
// name search, by listen path (each document's listen path read), by state
// (each document's active read), and every API streamed (p=-1, some 40 MB).
func BenchmarkAPISearch10k(b *testing.B) {
	db := filepath.Join(b.TempDir(), "management.db")
	seedClassic(b, db, 10000)
	in := start(b, db)
	for _, c := range []struct{ name, path string }{
		{"name", "/api/apis/search?q=API+4999+%23"},
		{"name-p500", "/api/apis/search?q=seeded&p=500"},
		{"listen-path", "/api/apis/search?q=/seeded-4999/&fields=listen_path"},
		{"active", "/api/apis/search?active=true&p=1000"},
		{"all-streamed", "/api/apis/search?q=seeded&p=-1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchRequest(b, in, "GET", c.path, nil, 200)
			}
		})
	}
}
