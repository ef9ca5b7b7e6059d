package app

import (
	"testing"

	"github.com/gatehouse/gatehouse/pkg/metrics/metricstest"
)

// TestMetrics scrapes /metrics after REST traffic: the names and labels of
// CONTRACT §5, route patterns instead of paths, no ID, key or path in any
// label value.
func TestMetrics(t *testing.T) {
	p := newPortal(t)
	created := p.expect(p.do("POST", "/portal-api/products", `{"Name":"payments"}`), 201, "create").(map[string]any)
	id := p.id(created)
	p.expect(p.do("GET", "/portal-api/products/"+id, ""), 200, "get")
	p.do("GET", "/portal-api/nowhere-7f3a", "")
	p.do("GET", "/portal-api/products", "", withAuth{"wrong-key-5b1e"})

	m := metricstest.Scrape(t, p.base)
	m.CheckCommon(t, "/portal-api/products/{product_id}")
	m.CheckRoutes(t, p.base, "site") // gateway.Public's label: TestBrowser's pages, in this process when Chromium is installed
	m.CheckNoSecrets(t, token, "wrong-key-5b1e", "nowhere-7f3a", "/portal-api/products/"+id)
}
