package app

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

// TestAddressingByDBID: every route that names {apiId} also takes the API's
// db id (CONTRACT §2 "Addressing"), and a body sent there must name the
// same API.
func TestAddressingByDBID(t *testing.T) {
	in := start(t, "")
	classicID, oasID := "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0", "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a"
	classicDB := in.admin("POST", "/api/apis", classicBody(classicID, "By db #byid")).json(t)["Meta"].(string)
	oasDB := in.admin("POST", "/api/apis/oas", oasDoc(oasID, "O", "/o/")).json(t)["Meta"].(string)
	otherDB := in.admin("POST", "/api/apis", `{"api_definition":{"name":"Other"}}`).json(t)["Meta"].(string)
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string // a substring of the answer
	}{
		{"classic get", "GET", "/api/apis/" + classicDB, "", 200, `"api_id":"` + classicID + `"`},
		{"oas get via classic route", "GET", "/api/apis/" + oasDB, "", 200, `"is_oas":true`},
		{"classic put, no ids", "PUT", "/api/apis/" + classicDB, `{"api_definition":{"name":"Renamed #byid"}}`, 200, "API updated"},
		{"classic put, both ids", "PUT", "/api/apis/" + classicDB,
			`{"api_definition":{"name":"Renamed #byid","api_id":"` + classicID + `","id":"` + classicDB + `"},"hook_references":[],"is_site":false,"sort_by":0}`, 200, "API updated"},
		{"classic put by api id, body db id", "PUT", "/api/apis/" + classicID, `{"api_definition":{"name":"Again","id":"` + classicDB + `"}}`, 200, "API updated"},
		{"classic put, empty ids", "PUT", "/api/apis/" + classicDB, `{"api_definition":{"name":"Empty ids","api_id":"","id":""}}`, 200, "API updated"},
		{"classic put, another api_id", "PUT", "/api/apis/" + classicDB, `{"api_definition":{"name":"x","api_id":"other"}}`, 400, "api_definition.api_id"},
		{"classic put, another db id", "PUT", "/api/apis/" + classicID, `{"api_definition":{"name":"x","id":"` + otherDB + `"}}`, 400, "api_definition.id"},
		{"classic put, db id not a string", "PUT", "/api/apis/" + classicID, `{"api_definition":{"name":"x","id":5}}`, 400, "api_definition.id"},
		{"classic put, unknown db id", "PUT", "/api/apis/ffffffffffffffffffffffff", `{"api_definition":{"name":"x"}}`, 404, "API not found"},
		{"classic put on an oas db id", "PUT", "/api/apis/" + oasDB, `{"api_definition":{"name":"x"}}`, 400, "Use the OAS API endpoints"},
		{"oas get", "GET", "/api/apis/oas/" + oasDB, "", 200, `"dbId":"` + oasDB + `"`},
		{"oas put, no id", "PUT", "/api/apis/oas/" + oasDB, oasDoc("", "O2", "/o/"), 200, "API updated."},
		{"oas put, both ids", "PUT", "/api/apis/oas/" + oasDB, withDBID(oasDoc(oasID, "O3", "/o/"), oasDB), 200, "API updated."},
		{"oas put, another id", "PUT", "/api/apis/oas/" + oasDB, oasDoc(classicID, "O", "/o/"), 400, "x-tyk-api-gateway.info.id"},
		{"oas put, another db id", "PUT", "/api/apis/oas/" + oasID, withDBID(oasDoc(oasID, "O", "/o/"), classicDB), 400, "x-tyk-api-gateway.info.dbId"},
		{"oas put on a classic db id", "PUT", "/api/apis/oas/" + classicDB, oasDoc("", "O", "/o/"), 404, "API not found"},
		{"oas categories put", "PUT", "/api/apis/oas/" + oasDB + "/categories", `{"categories":["db"]}`, 200, "API categories updated."},
		{"oas categories get", "GET", "/api/apis/oas/" + oasDB + "/categories", "", 200, `{"categories":["db"]}`},
		{"oas export", "GET", "/api/apis/oas/" + oasDB + "/export", "", 200, `"id": "` + oasID + `"`},
		{"classic db id on oas get", "GET", "/api/apis/oas/" + classicDB, "", 404, "API not found"},
		{"classic db id on export", "GET", "/api/apis/oas/" + classicDB + "/export", "", 400, "Could not retrieve API detail."},
		{"upper-case db id", "GET", "/api/apis/" + strings.ToUpper(classicDB), "", 404, "API not found"},
	}
	for _, c := range cases {
		r := in.admin(c.method, c.path, nilIfEmpty(c.body))
		if r.status != c.status || !bytes.Contains(r.body, []byte(c.want)) {
			t.Errorf("%s: %s %s: %d %s; want %d with %s", c.name, c.method, c.path, r.status, r.body, c.status, c.want)
		}
	}
	got := in.admin("GET", "/api/apis/"+classicID, nil)
	if !bytes.Contains(got.body, []byte(`"name":"Empty ids","api_id":"`+classicID+`","id":"`+classicDB+`"`)) {
		t.Fatalf("classic after updates by db id: %s", got.body)
	}
	// gRPC takes the db id too
	ctx := grpcCtx(adminToken)
	if g, err := in.client.GetOASAPI(ctx, &managementv1.GetOASAPIRequest{ApiId: oasDB}); err != nil || !bytes.Contains(g.GetBody().GetData(), []byte(oasID)) {
		t.Fatalf("gRPC GetOASAPI by db id: %v", err)
	}
	if _, err := in.client.UpdateOASAPI(ctx, &managementv1.UpdateOASAPIRequest{ApiId: oasDB, Body: httpBody(oasDoc(classicID, "x", "/x/"))}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("gRPC UpdateOASAPI naming another API: %v, want InvalidArgument", err)
	}
	// deletes by db id, as tyk-sync sends them, on both kinds of route
	for _, c := range []struct{ path, msg string }{
		{"/api/apis/oas/" + oasDB, "API deleted."},
		{"/api/apis/" + classicDB, "API deleted"},
	} {
		expect(t, "delete "+c.path, in.admin("DELETE", c.path, nil), 200, `{"Status":"OK","Message":"`+c.msg+`","Meta":null}`)
		expect(t, "delete again "+c.path, in.admin("DELETE", c.path, nil), 404, mgmtErr("API not found"))
	}
	for _, id := range []string{classicID, oasID} {
		expect(t, "gone "+id, in.admin("GET", "/api/apis/"+id, nil), 404, mgmtErr("API not found"))
	}
	// authorization still comes before the lookup
	_, key := in.createUser(`{"apis":"read"}`)
	expect(t, "read-only delete by db id", in.do("DELETE", "/api/apis/"+otherDB, key, nil), 403,
		mgmtErr("access denied: You do not have permission to access /api/apis/"+otherDB))
}

// withDBID adds x-tyk-api-gateway.info.dbId to a document made by oasDoc.
func withDBID(doc, dbID string) string {
	return strings.Replace(doc, `"info":{"id":`, `"info":{"dbId":"`+dbID+`","id":`, 1)
}

// TestOrgID: the installation's organisation id is on every user and in
// every definition that names none.
func TestOrgID(t *testing.T) {
	in := start(t, "")
	id, _ := in.createUser(`{"apis":"read"}`)
	users := in.admin("GET", "/api/users?p=0", nil).json(t)["users"].([]any)
	org := users[0].(map[string]any)["org_id"].(string)
	if !dbIDPattern.MatchString(org) {
		t.Fatalf("org_id %q, want 24 lowercase hex", org)
	}
	for _, u := range users {
		if u.(map[string]any)["org_id"] != org {
			t.Fatalf("users carry different org ids: %v", users)
		}
	}
	if got := in.admin("GET", "/api/users/"+id, nil).json(t)["org_id"]; got != org {
		t.Fatalf("GET user org_id %v, want %s", got, org)
	}
	for _, c := range []struct {
		name, method, path, body, api, want string
	}{
		{"classic create", "POST", "/api/apis", `{"api_definition":{"name":"A","api_id":"org1"}}`, "org1", `"org_id":"` + org + `"`},
		{"classic create, empty org", "POST", "/api/apis", `{"api_definition":{"name":"A","api_id":"org2","org_id":""}}`, "org2", `"org_id":"` + org + `"`},
		{"classic create, own org kept", "POST", "/api/apis", `{"api_definition":{"name":"A","api_id":"org3","org_id":"5e9d9544a1dcd60001d0ed20"}}`, "org3", `"org_id":"5e9d9544a1dcd60001d0ed20"`},
		{"classic update, null org", "PUT", "/api/apis/org3", `{"api_definition":{"name":"A","org_id":null}}`, "org3", `"org_id":"` + org + `"`},
		// an OAS document is stored as received apart from its dbId (CONTRACT §2):
		// no orgId is written into it; a migration carries the classic org_id there
		{"oas create", "POST", "/api/apis/oas", oasDoc("org4", "O", "/org4/"), "org4", `"id":"org4","name":"O","state":{"active":true},"dbId":`},
	} {
		expect(t, c.name, in.admin(c.method, c.path, c.body), 200, "")
		if got := in.admin("GET", "/api/apis/"+c.api, nil); !bytes.Contains(got.body, []byte(c.want)) {
			t.Errorf("%s: stored %s, want %s", c.name, got.body, c.want)
		}
	}
	// the org id survives a restart
	in.stop()
	in = start(t, in.db)
	if got := in.admin("GET", "/api/users/"+id, nil).json(t)["org_id"]; got != org {
		t.Fatalf("org_id after restart %v, want %s", got, org)
	}
}

// TestResetKeyMethods: the Dashboard documents PUT for the key reset; POST stays.
func TestResetKeyMethods(t *testing.T) {
	in := start(t, "")
	id, key := in.createUser(`{"apis":"read"}`)
	for _, method := range []string{"PUT", "POST"} {
		r := in.admin(method, "/api/users/"+id+"/actions/key/reset", nil)
		expect(t, method+" reset", r, 200, "")
		v := r.json(t)
		if v["Status"] != "OK" || v["Message"] != "User key reset" || v["Meta"] != nil || v["access_key"] == "" {
			t.Fatalf("%s reset: %s", method, r.body)
		}
		expect(t, method+": old key", in.do("GET", "/api/apis", key, nil), 401, mgmtErr("Not authorised"))
		key = v["access_key"].(string)
		expect(t, method+": new key", in.do("GET", "/api/apis", key, nil), 200, "")
		expect(t, method+" reset of a missing user", in.admin(method, "/api/users/ffffffffffffffffffffffff/actions/key/reset", nil), 404, mgmtErr("User not found"))
	}
	r := in.admin("GET", "/api/users/"+id+"/actions/key/reset", nil)
	expect(t, "GET reset", r, 405, "")
	if a := r.header.Get("Allow"); !strings.Contains(a, "PUT") || !strings.Contains(a, "POST") {
		t.Fatalf("Allow %q, want PUT and POST", a)
	}
}

func httpBody(s string) *httpbody.HttpBody {
	return &httpbody.HttpBody{ContentType: "application/json", Data: []byte(s)}
}

// TestAcceptFieldsInOrder: several Accept header fields are one list in
// their order, as clients generated from the description send them.
func TestAcceptFieldsInOrder(t *testing.T) {
	in := start(t, "")
	id := "acce0000000000000000000000000001"
	expect(t, "create", in.admin("POST", "/api/apis/oas", oasDoc(id, "A", "/acc/")), 200, "")
	for _, c := range []struct {
		accepts []string
		want    string
	}{
		{[]string{"application/json", "application/x-yaml"}, "application/json"},
		{[]string{"application/x-yaml", "application/json"}, "application/x-yaml"},
		{[]string{"text/html", "application/yaml"}, "application/x-yaml"},
		{[]string{"application/json, application/x-yaml"}, "application/json"},
	} {
		req, _ := http.NewRequest("GET", in.base+"/api/apis/oas/"+id, nil)
		req.Header.Set("Authorization", adminToken)
		for _, a := range c.accepts {
			req.Header.Add("Accept", a)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Content-Type"); res.StatusCode != 200 || got != c.want {
			t.Errorf("Accept %q: %d %s, want %s", c.accepts, res.StatusCode, got, c.want)
		}
	}
}
