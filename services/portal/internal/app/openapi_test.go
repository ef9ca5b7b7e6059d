package app

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// items reports the number of elements in a JSON array body.
func items(want int) func([]byte) string {
	return func(body []byte) string {
		var v []json.RawMessage
		if err := json.Unmarshal(body, &v); err != nil || len(v) != want {
			return fmt.Sprintf("%d items (%v), want %d: %s", len(v), err, want, body)
		}
		return ""
	}
}

// TestOpenAPIMatchesService checks the served description against real
// answers: success status, JSON names, query names, 401 and the
// AdminAPIToken security scheme.
func TestOpenAPIMatchesService(t *testing.T) {
	p := newPortal(t)
	d := servertest.OpenAPI(t, p.base)
	d.CheckSecurity(t, "AdminAPIToken")
	const docs = "/portal-api/products/{product_id}/docs"
	for _, c := range []servertest.Call{
		{Method: "POST", Path: "/portal-api/products", URL: "/portal-api/products", Body: `{"Name":"a"}`},
		{Method: "POST", Path: "/portal-api/products", URL: "/portal-api/products", Body: `{"Name":"b"}`},
		{Method: "GET", Path: "/portal-api/products", URL: "/portal-api/products?page=2&per_page=1", Effect: items(1)},
		{Method: "PUT", Path: "/portal-api/products/{product_id}", URL: "/portal-api/products/1", Body: `{"DisplayName":"A"}`},
		{Method: "POST", Path: "/portal-api/tags", URL: "/portal-api/tags", Body: `{"Name":"t"}`},
		{Method: "GET", Path: "/portal-api/tags", URL: "/portal-api/tags"},
		{Method: "POST", Path: "/portal-api/categories", URL: "/portal-api/categories", Body: `{"Name":"c"}`},
		{Method: "POST", Path: docs, URL: "/portal-api/products/1/docs", Body: `{"Title":"one"}`},
		{Method: "POST", Path: docs, URL: "/portal-api/products/1/docs", Body: `{"Title":"two"}`},
		{Method: "GET", Path: docs, URL: "/portal-api/products/1/docs?page=1&per_page=1", Effect: items(1)},
		{Method: "PUT", Path: docs + "/{doc_id}", URL: "/portal-api/products/1/docs/1", Body: `{"Categories":["1"],"Tags":["1"]}`},
		{Method: "DELETE", Path: docs + "/{doc_id}", URL: "/portal-api/products/1/docs/2"},
		{Method: "DELETE", Path: "/portal-api/tags/{tag_id}", URL: "/portal-api/tags/1"},
	} {
		d.Check(t, token, c)
	}
	d.CheckQueriesExercised(t)
}
