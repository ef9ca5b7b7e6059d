package app

import (
	"encoding/json"
	"regexp"
	"slices"
	"testing"
	"time"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
	"github.com/gatehouse/gatehouse/pkg/restfacade/restfacadetest"
)

// TestDirect: every route the facade serves itself (restfacade's direct
// path) answers exactly as grpc-gateway does — status, headers, body —
// for accepted and refused requests (no key, a wrong key, too few
// permissions, an unknown object, bad and malformed queries, a body where
// none is read, HEAD, a client that accepts trailers, a forwarded
// address), and leaves the same audit entry and the same counts in the
// metrics. A write is made on an object of its own each way (a
// placeholder in the path), the answers compared with its id put back.
func TestDirect(t *testing.T) {
	in := start(t, "")
	_, reader := in.createUser(`{"apis":"read","users":"read","keys":"read","audit_logs":"read"}`)
	users := map[string]string{}
	for _, way := range restfacadetest.Ways {
		expect(t, "create classic", in.admin("POST", "/api/apis", classicBody("dclassic-"+way, "C "+way+" #team1")), 200, "")
		expect(t, "create oas", in.admin("POST", "/api/apis/oas", oasDoc("doas-"+way, "O "+way, "/doas-"+way+"/")), 200, "")
		expect(t, "create other oas", in.admin("POST", "/api/apis/oas", oasDoc("dother-"+way, "P "+way, "/dother-"+way+"/")), 200, "")
		users[way], _ = in.createUser(`{"apis":"read"}`)
	}
	expect(t, "create kept", in.admin("POST", "/api/apis/oas", oasDoc("dkept", "Kept #team2", "/dkept/")), 200, "")

	named := func(prefix string) [2]string {
		return [2]string{prefix + restfacadetest.Ways[0], prefix + restfacadetest.Ways[1]}
	}
	type request = restfacadetest.Request
	requests := []request{
		{Pattern: "GET /api/apis/categories", Method: "GET", Path: "/api/apis/categories", Key: adminToken},
		{Pattern: "GET /api/apis/categories", Method: "HEAD", Path: "/api/apis/categories", Key: adminToken},
		{Pattern: "GET /api/apis/categories", Method: "GET", Path: "/api/apis/categories", Key: adminToken, Headers: []string{"TE", "trailers"}},
		{Pattern: "GET /api/apis/categories", Method: "GET", Path: "/api/apis/categories?%zz", Key: adminToken},
		{Pattern: "GET /api/apis/categories", Method: "GET", Path: "/api/apis/categories", Key: adminToken, Body: `{"x":1}`},
		{Pattern: "GET /api/apis/categories", Method: "GET", Path: "/api/apis/categories"},
		{Pattern: "GET /api/apis/categories", Method: "GET", Path: "/api/apis/categories", Key: "wrong-key-0123456789"},
		{Pattern: "GET /api/apis/categories", Method: "GET", Path: "/api/apis/categories", Key: reader, Headers: []string{"Accept", "application/json"}},
		{Pattern: "GET /api/apis/keys", Method: "GET", Path: "/api/apis/keys?p=1", Key: adminToken},
		{Pattern: "GET /api/apis/keys", Method: "GET", Path: "/api/apis/keys?p=abc", Key: adminToken},
		{Pattern: "GET /api/apis/oas/{api_id}/categories", Method: "GET", Path: "/api/apis/oas/dkept/categories", Key: reader},
		{Pattern: "GET /api/apis/oas/{api_id}/categories", Method: "GET", Path: "/api/apis/oas/nothere/categories", Key: adminToken},
		{Pattern: "GET /api/apis/oas/{api_id}/categories", Method: "GET", Path: "/api/apis/oas/dclassic-direct/categories", Key: adminToken},
		{Pattern: "GET /api/apis/{api_id}/keys", Method: "GET", Path: "/api/apis/dkept/keys", Key: adminToken},
		{Pattern: "GET /api/apis/{api_id}/keys", Method: "GET", Path: "/api/apis/nothere/keys?p=2", Key: adminToken},
		{Pattern: "GET /api/apis/{api_id}/keys/search", Method: "GET", Path: "/api/apis/dkept/keys/search?q=abc", Key: adminToken},
		{Pattern: "GET /api/audit-logs", Method: "GET", Path: "/api/audit-logs?p=1&action=DELETE", Key: reader},
		{Pattern: "GET /api/audit-logs", Method: "GET", Path: "/api/audit-logs?from=yesterday", Key: adminToken},
		{Pattern: "GET /api/system/nodes", Method: "GET", Path: "/api/system/nodes", Key: adminToken},
		{Pattern: "GET /api/users", Method: "GET", Path: "/api/users?p=0", Key: adminToken},
		{Pattern: "GET /api/users", Method: "GET", Path: "/api/users", Key: "wrong-key-0123456789"},
		{Pattern: "DELETE /api/apis/{api_id}", Method: "DELETE", Path: "/api/apis/{classic}", Key: reader},
		{Pattern: "DELETE /api/apis/{api_id}", Method: "DELETE", Path: "/api/apis/{classic}", Key: adminToken, Headers: []string{"X-Forwarded-For", "192.0.2.7"}},
		{Pattern: "DELETE /api/apis/{api_id}", Method: "DELETE", Path: "/api/apis/{classic}", Key: adminToken},
		{Pattern: "DELETE /api/apis/{api_id}", Method: "DELETE", Path: "/api/apis/nothere?x=1", Key: adminToken, Body: `{"x":1}`},
		{Pattern: "DELETE /api/apis/{api_id}", Method: "DELETE", Path: "/api/apis/{other}", Key: adminToken},
		{Pattern: "DELETE /api/apis/oas/{api_id}", Method: "DELETE", Path: "/api/apis/oas/{oas}", Key: adminToken},
		{Pattern: "DELETE /api/apis/oas/{api_id}", Method: "DELETE", Path: "/api/apis/oas/nothere", Key: adminToken},
		{Pattern: "DELETE /api/apis/oas/{api_id}", Method: "DELETE", Path: "/api/apis/oas/dkept", Key: "wrong-key-0123456789"},
		{Pattern: "DELETE /api/apis/{api_id}/keys/{key_id}", Method: "DELETE", Path: "/api/apis/dkept/keys/nokey", Key: adminToken},
		{Pattern: "DELETE /api/assets/{asset_id}", Method: "DELETE", Path: "/api/assets/noasset", Key: adminToken},
		{Pattern: "DELETE /api/keys/{key_id}", Method: "DELETE", Path: "/api/keys/nokey", Key: adminToken},
		{Pattern: "DELETE /api/keys/{key_id}", Method: "DELETE", Path: "/api/keys/nokey", Key: reader},
		{Pattern: "DELETE /api/portal/policies/{policy_id}", Method: "DELETE", Path: "/api/portal/policies/nopolicy", Key: adminToken},
		{Pattern: "PUT /api/users/{user_id}/actions/key/reset", Method: "PUT", Path: "/api/users/{user}/actions/key/reset", Key: adminToken},
		{Pattern: "PUT /api/users/{user_id}/actions/key/reset", Method: "PUT", Path: "/api/users/nouser/actions/key/reset", Key: adminToken},
		{Pattern: "POST /api/users/{user_id}/actions/key/reset", Method: "POST", Path: "/api/users/{user}/actions/key/reset", Key: adminToken},
		{Pattern: "POST /api/users/{user_id}/actions/key/reset", Method: "POST", Path: "/api/users/{user}/actions/key/reset", Key: reader},
		{Pattern: "DELETE /api/users/{user_id}", Method: "DELETE", Path: "/api/users/{user}", Key: adminToken},
		{Pattern: "DELETE /api/users/{user_id}", Method: "DELETE", Path: "/api/users/nouser", Key: adminToken},
	}

	served, err := restfacade.DirectRoutes(managementv1.ManagementService_ServiceDesc.ServiceName)
	if err != nil || !slices.Contains(served, "GET /api/apis/categories") || !slices.Contains(served, "DELETE /api/apis/{api_id}") {
		t.Fatalf("the benchmark's routes are not direct ones: %v %v", served, err)
	}
	restfacadetest.Compare(t, restfacadetest.Service{
		Base: in.base,
		Name: managementv1.ManagementService_ServiceDesc.ServiceName,
		Vars: map[string][2]string{"{classic}": named("dclassic-"), "{oas}": named("doas-"), "{other}": named("dother-"),
			"{user}": {users[restfacadetest.Ways[0]], users[restfacadetest.Ways[1]]}},
		Mask: regexp.MustCompile(`"(access_key|key)":"[^"]*"`),
		Audit: func() string {
			entries, _ := in.auditLogs("?p=1")
			if len(entries) == 0 {
				return ""
			}
			e := entries[0]
			e.ID, e.Time = "", time.Time{}
			b, _ := json.Marshal(e)
			return string(b)
		},
	}, requests)
}
