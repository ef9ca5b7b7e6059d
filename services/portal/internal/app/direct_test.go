package app

import (
	"encoding/json"
	"regexp"
	"strconv"
	"testing"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/restfacade/restfacadetest"
)

// TestDirect: every route the facade serves itself (restfacade's direct
// path) answers exactly as grpc-gateway does, accepted and refused, with
// the same audit entry and counts in the metrics (restfacadetest.Compare).
func TestDirect(t *testing.T) {
	p := newPortal(t)
	create := func(path, name string) string {
		r := p.do("POST", path, `{"Name":"`+name+`"}`)
		p.expect(r, 201, "create "+name)
		var c struct{ ID int }
		json.Unmarshal(r.body, &c)
		return strconv.Itoa(c.ID)
	}
	for _, n := range []string{"a", "b", "c"} { // the ways' ids apart from the admin's
		create("/portal-api/tags", "before-"+n)
		create("/portal-api/categories", "before-"+n)
	}
	var tags, categories [2]string
	for i, way := range restfacadetest.Ways {
		tags[i] = create("/portal-api/tags", "tag-"+way)
		categories[i] = create("/portal-api/categories", "cat-"+way)
	}

	type request = restfacadetest.Request
	requests := []request{
		{Pattern: "DELETE /portal-api/tags/{tag_id}", Method: "DELETE", Path: "/portal-api/tags/{tag}", Key: token, Headers: []string{"TE", "trailers"}},
		{Pattern: "DELETE /portal-api/tags/{tag_id}", Method: "DELETE", Path: "/portal-api/tags/{tag}", Key: token},
		{Pattern: "DELETE /portal-api/tags/{tag_id}", Method: "DELETE", Path: "/portal-api/tags/abc", Key: token},
		{Pattern: "DELETE /portal-api/tags/{tag_id}", Method: "DELETE", Path: "/portal-api/tags/998?%zz", Key: token, Body: `{"x":1}`},
		{Pattern: "DELETE /portal-api/tags/{tag_id}", Method: "DELETE", Path: "/portal-api/tags/1"},
		{Pattern: "DELETE /portal-api/categories/{category_id}", Method: "DELETE", Path: "/portal-api/categories/{category}", Key: token, Headers: []string{"X-Forwarded-For", "192.0.2.7"}},
		{Pattern: "DELETE /portal-api/categories/{category_id}", Method: "DELETE", Path: "/portal-api/categories/999", Key: token},
		{Pattern: "DELETE /portal-api/apps/{app_id}", Method: "DELETE", Path: "/portal-api/apps/999", Key: token},
		{Pattern: "DELETE /portal-api/apps/{app_id}", Method: "DELETE", Path: "/portal-api/apps/x1", Key: token},
		{Pattern: "DELETE /portal-api/apps/{app_id}/credentials/{credential_id}", Method: "DELETE", Path: "/portal-api/apps/999/credentials/5", Key: token},
		{Pattern: "DELETE /portal-api/apps/{app_id}/credentials/{credential_id}", Method: "DELETE", Path: "/portal-api/apps/999/credentials/x", Key: "wrong"},
		{Pattern: "DELETE /portal-api/plans/{plan_id}", Method: "DELETE", Path: "/portal-api/plans/999", Key: token},
		{Pattern: "DELETE /portal-api/products/{product_id}", Method: "DELETE", Path: "/portal-api/products/999", Key: token},
		{Pattern: "DELETE /portal-api/products/{product_id}/docs/{doc_id}", Method: "DELETE", Path: "/portal-api/products/999/docs/1", Key: token},
		{Pattern: "DELETE /portal-api/users/{user_id}", Method: "DELETE", Path: "/portal-api/users/999", Key: token},
		{Pattern: "DELETE /portal-api/users/{user_id}", Method: "DELETE", Path: "/portal-api/users/-1", Key: token},
	}
	volatile := regexp.MustCompile(`"(id|created_at|time)":"[^"]*"`)
	restfacadetest.Compare(t, restfacadetest.Service{
		Base: p.base,
		Name: portalv1.PortalService_ServiceDesc.ServiceName,
		Vars: map[string][2]string{"{tag}": tags, "{category}": categories},
		Audit: func() string {
			r := p.do("GET", "/portal-api/audit-logs?page=1&per_page=1", "")
			return volatile.ReplaceAllString(string(r.body), "")
		},
	}, requests)
}
