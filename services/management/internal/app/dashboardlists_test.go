package app

import (
	"fmt"
	"strings"
	"testing"
)

// policyIDs lists the ids of a `{"Data":[..],"Pages":n}` answer, in order.
func policyIDs(t *testing.T, r resp) string {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var ids []string
	for _, p := range r.json(t)["Data"].([]any) {
		ids = append(ids, p.(map[string]any)["id"].(string))
	}
	return strings.Join(ids, ",")
}

// TestDashboardPolicyLists restates the dashboard SDK's requests
// (PoliciesAPIService.GetPolicies with Active, SearchPolicies with q,
// policy_ids, active, state, sort, api_id, auth_type, p): every parameter
// given must match, in `_id` order; the answer is the list's `{"Data":[..],"Pages":n}`.
func TestDashboardPolicyLists(t *testing.T) {
	in := start(t, "")
	for _, p := range []string{
		`{"_id":"5f1e00000000000000000001","id":"gold","name":"Gold plan","active":true,"state":"active","auth_type":"authToken","access_rights":{"api-a":{"api_id":"api-a"}}}`,
		`{"_id":"5f1e00000000000000000002","id":"silver","name":"Silver plan","active":false,"state":"draft","auth_type":"authToken","access_rights":{"api-b":{"api_id":"api-b"}}}`,
		`{"_id":"5f1e00000000000000000003","id":"default/jwt-policy","name":"JWT","active":true,"state":"deny","auth_type":"jwt","access_rights":{"api-a":{"api_id":"api-a"},"api-c":{"api_id":"api-c"}}}`,
		`{"_id":"5f1e00000000000000000004","id":"bare","name":"No active field"}`,
	} {
		expect(t, "create", in.admin("POST", "/api/portal/policies", p), 200, "")
	}
	list := func(q string) string { return policyIDs(t, in.admin("GET", "/api/portal/policies"+q, nil)) }
	for _, c := range []struct{ query, want string }{
		{"?p=-2", "gold,silver,default/jwt-policy,bare"},
		{"?active=true", "gold,default/jwt-policy"},
		{"?active=1&p=-1", "gold,default/jwt-policy"},
		{"/search?q=gold", "gold"},                               // an id
		{"/search?q=PLAN", "gold,silver"},                        // part of the name
		{"/search?q=default%2Fjwt-policy", "default/jwt-policy"}, // an id with a slash
		{"/search?q=gold&policy_ids=silver,bare", "silver,bare"}, // policy_ids replaces q
		{"/search?active=true", "gold,default/jwt-policy"},
		{"/search?state=draft", "silver"},
		{"/search?auth_type=jwt", "default/jwt-policy"},
		{"/search?api_id=api-a", "gold,default/jwt-policy"},
		{"/search?api_id=api-b,api-c", "silver,default/jwt-policy"},
		{"/search?api_id=api-a&active=1&auth_type=authToken", "gold"},
		{"/search?sort=name", "gold,default/jwt-policy,bare,silver"},
		{"/search?sort=-name", "silver,bare,default/jwt-policy,gold"},
		{"/search?q=nothing", ""},
	} {
		if got := list(c.query); got != c.want {
			t.Errorf("GET /api/portal/policies%s: %q, want %q", c.query, got, c.want)
		}
	}
	// paging: 10 a page, Pages counts the matches
	for i := range 11 {
		expect(t, "fill", in.admin("POST", "/api/portal/policies", `{"name":"Fill plan `+string(rune('a'+i))+`"}`), 200, "")
	}
	r := in.admin("GET", "/api/portal/policies/search?q=plan&p=2", nil).json(t)
	if len(r["Data"].([]any)) != 3 || fmt.Sprint(r["Pages"]) != "2" {
		t.Errorf("search page 2: %d policies, %v pages; want 3 of 13 matches, 2 pages", len(r["Data"].([]any)), r["Pages"])
	}
	expect(t, "search bad p", in.admin("GET", "/api/portal/policies/search?p=x", nil), 400, mgmtErr("p must be an integer"))
	// the search is area policy, read
	_, key := in.createUser(`{"apis":"read"}`)
	expect(t, "search without policy read", in.do("GET", "/api/portal/policies/search?q=gold", key, nil), 403, "")
}

// TestDashboardAssetKinds restates the dashboard SDK's asset requests: the
// one kind the Dashboard knows is oas-template; another is refused on write
// with 422 and on ?kind= with 400, in the Dashboard's words.
func TestDashboardAssetKinds(t *testing.T) {
	in := start(t, "")
	expect(t, "template", in.admin("POST", "/api/assets", `{"id":"t1","name":"T","kind":"oas-template","data":{}}`), 201, "")
	expect(t, "no kind", in.admin("POST", "/api/assets", `{"id":"t2","name":"T"}`), 201, "")
	expect(t, "unknown kind", in.admin("POST", "/api/assets", `{"id":"t3","kind":"oas-templat"}`), 422, mgmtErr("unsupported asset kind: 'oas-templat'."))
	expect(t, "kind not a string", in.admin("POST", "/api/assets", `{"id":"t3","kind":5}`), 400, "")
	expect(t, "unknown kind on update", in.admin("PUT", "/api/assets/t1", `{"kind":"other"}`), 422, mgmtErr("unsupported asset kind: 'other'."))
	expect(t, "nothing stored", in.admin("GET", "/api/assets/t3", nil), 404, "")
	r := in.admin("GET", "/api/assets?kind=oas-template", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"id":"t1"`) || !strings.Contains(string(r.body), `"id":"t2"`) {
		t.Fatalf("?kind=oas-template: %d %s", r.status, r.body)
	}
	expect(t, "?kind unknown", in.admin("GET", "/api/assets?kind=oas-temp", nil), 400, mgmtErr("unsupported asset kind: 'oas-temp'"))
}
