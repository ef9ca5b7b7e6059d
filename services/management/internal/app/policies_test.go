package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

// policyBody is a policy as the Dashboard keeps it, with an unknown member
// and numbers a float64 would change.
func policyBody(id string) string {
	return fmt.Sprintf(`{"id":%q,"name":"Gold","rate":1000,"per":1.50,"quota_max":9007199254740993,`+
		`"access_rights":{"missing-api":{"api_id":"missing-api","api_name":"none","versions":["Default"]}},"x-own":{"k":[1,2]}}`, id)
}

func TestPolicies(t *testing.T) {
	in := start(t, "")
	org := in.orgID()
	r := in.admin("POST", "/api/portal/policies", policyBody("gold"))
	expect(t, "create", r, 200, "")
	dbID := r.json(t)["Message"].(string)
	if !dbIDPattern.MatchString(dbID) || r.json(t)["Status"] != "OK" || r.json(t)["Meta"] != nil {
		t.Fatalf("create answer %s", r.body)
	}
	want := `{"id":"gold","name":"Gold","rate":1000,"per":1.50,"quota_max":9007199254740993,` +
		`"access_rights":{"missing-api":{"api_id":"missing-api","api_name":"none","versions":["Default"]}},"x-own":{"k":[1,2]},` +
		`"_id":"` + dbID + `","org_id":"` + org + `"}`
	for _, ref := range []string{dbID, "gold"} {
		if got := in.admin("GET", "/api/portal/policies/"+ref, nil); got.status != 200 || string(got.body) != want {
			t.Fatalf("get %s: %d %s\nwant %s", ref, got.status, got.body, want)
		}
	}

	// _id generated when absent; id defaults to it; given 24-hex _id kept
	r = in.admin("POST", "/api/portal/policies", `{"name":"no ids","_id":""}`)
	expect(t, "create without ids", r, 200, "")
	gen := r.json(t)["Message"].(string)
	if got := in.admin("GET", "/api/portal/policies/"+gen, nil).json(t); got["id"] != gen || got["_id"] != gen {
		t.Fatalf("ids of a policy created without: %v", got)
	}
	given := "5f1e00000000000000000001"
	expect(t, "create with _id", in.admin("POST", "/api/portal/policies", `{"_id":"`+given+`","name":"given"}`), 200,
		`{"Status":"OK","Message":"`+given+`","Meta":null}`)

	sameID := mgmtErr("Found policy with the same ID")
	for _, c := range []struct{ what, body string }{
		{"same id", `{"id":"gold"}`},
		{"same _id", `{"_id":"` + dbID + `"}`},
		{"id that is another's _id", `{"id":"` + given + `"}`},
		{"_id that is another's id", `{"_id":"` + gen + `","id":"x"}`},
	} {
		expect(t, c.what, in.admin("POST", "/api/portal/policies", c.body), 409, sameID)
	}
	for _, c := range []struct{ what, body, msg string }{
		{"not JSON", `{`, "Malformed policy data"},
		{"array", `[]`, "Malformed policy data"},
		{"trailing data", `{}{}`, "Malformed policy data"},
		{"_id not hex", `{"_id":"pol-1"}`, "_id must be 24 lowercase hex digits"},
		{"_id upper case", `{"_id":"5F1E00000000000000000001"}`, "_id must be 24 lowercase hex digits"},
		{"_id a number", `{"_id":5}`, "_id must be a string"},
		{"id with a space", `{"id":"a b"}`, `id must not contain spaces, control characters or any of ? # % " \`},
	} {
		expect(t, c.what, in.admin("POST", "/api/portal/policies", c.body), 400, mgmtErr(c.msg))
	}

	// an id with a slash, as Tyk accepts it (Kubernetes tooling writes default/jwt-policy), addressed as %2F
	expect(t, "id with a slash", in.admin("POST", "/api/portal/policies", `{"id":"default/jwt-policy","name":"K8s"}`), 200, "")
	if got := in.admin("GET", "/api/portal/policies/default%2Fjwt-policy", nil).json(t); got["name"] != "K8s" || got["id"] != "default/jwt-policy" {
		t.Fatalf("get default%%2Fjwt-policy: %v", got)
	}
	expect(t, "update default%2Fjwt-policy", in.admin("PUT", "/api/portal/policies/default%2Fjwt-policy", `{"id":"default/jwt-policy","name":"K8s 2"}`), 200, "")
	expect(t, "unescaped slash is another path", in.admin("GET", "/api/portal/policies/default/jwt-policy", nil), 404, "")
	expect(t, "delete default%2Fjwt-policy", in.admin("DELETE", "/api/portal/policies/default%2Fjwt-policy", nil), 200, "")
	expect(t, "gone", in.admin("GET", "/api/portal/policies/default%2Fjwt-policy", nil), 404, mgmtErr("Policy not found"))

	// list: tyk-sync's p=-2 returns all; pages of 10
	for i := range 10 {
		expect(t, "fill", in.admin("POST", "/api/portal/policies", fmt.Sprintf(`{"id":"p%d"}`, i)), 200, "")
	}
	all := in.admin("GET", "/api/portal/policies?p=-2", nil).json(t)
	if len(all["Data"].([]any)) != 13 || fmt.Sprint(all["Pages"]) != "2" {
		t.Fatalf("list all: %d policies, %v pages", len(all["Data"].([]any)), all["Pages"])
	}
	if page2 := in.admin("GET", "/api/portal/policies?p=2", nil).json(t); len(page2["Data"].([]any)) != 3 {
		t.Fatalf("page 2: %v", page2)
	}
	expect(t, "bad p", in.admin("GET", "/api/portal/policies?p=x", nil), 400, mgmtErr("p must be an integer"))

	// update by id and by _id; the _id stays, the id may change
	expect(t, "update by id", in.admin("PUT", "/api/portal/policies/gold", `{"id":"gold","name":"Gold 2","rate":5}`), 200,
		`{"Status":"OK","Message":"Data updated","Meta":null}`)
	expect(t, "rename id", in.admin("PUT", "/api/portal/policies/"+dbID, `{"_id":"`+dbID+`","id":"platinum","name":"P"}`), 200, "")
	if got := in.admin("GET", "/api/portal/policies/platinum", nil).json(t); got["_id"] != dbID || got["name"] != "P" {
		t.Fatalf("after rename: %v", got)
	}
	expect(t, "old id gone", in.admin("GET", "/api/portal/policies/gold", nil), 404, mgmtErr("Policy not found"))
	expect(t, "update to a taken id", in.admin("PUT", "/api/portal/policies/platinum", `{"id":"p1"}`), 409, sameID)
	expect(t, "update with another _id", in.admin("PUT", "/api/portal/policies/platinum", `{"_id":"`+given+`"}`), 400,
		mgmtErr(`_id "`+given+`" does not name the policy at this path (`+dbID+`)`))
	expect(t, "update missing", in.admin("PUT", "/api/portal/policies/nope", `{}`), 404, mgmtErr("Policy not found"))
	expect(t, "delete", in.admin("DELETE", "/api/portal/policies/platinum", nil), 200, `{"Status":"OK","Message":"Data deleted","Meta":null}`)
	expect(t, "delete again", in.admin("DELETE", "/api/portal/policies/"+dbID, nil), 404, mgmtErr("Policy not found"))

	// gRPC carries the same operations
	_, err := in.client.GetPolicy(grpcCtx(adminToken), &managementv1.GetPolicyRequest{PolicyId: "nope"})
	if status.Code(err) != codes.NotFound || status.Convert(err).Message() != "Policy not found" {
		t.Fatalf("gRPC GetPolicy: %v", err)
	}
	checkStore(t, in)
}

func TestAssets(t *testing.T) {
	in := start(t, "")
	expect(t, "empty list", in.admin("GET", "/api/assets", nil), 200, `[]`)
	r := in.admin("POST", "/api/assets", `{"id":"my-template","name":"T","kind":"oas-template","data":{"n":9007199254740993},"last_updated":""}`)
	expect(t, "create", r, 201, "")
	dbID := r.json(t)["Meta"].(string)
	if !dbIDPattern.MatchString(dbID) || r.json(t)["Status"] != "success" || r.json(t)["Message"] != "asset created" {
		t.Fatalf("create answer %s", r.body)
	}
	got := in.admin("GET", "/api/assets/my-template", nil)
	if got.status != 200 || !strings.Contains(string(got.body), `"data":{"n":9007199254740993}`) || !strings.Contains(string(got.body), `"_id":"`+dbID+`"`) {
		t.Fatalf("get: %d %s", got.status, got.body)
	}
	if stamp, _ := got.json(t)["last_updated"].(string); len(stamp) < 20 {
		t.Fatalf("last_updated %q: want an RFC 3339 time", stamp)
	}
	expect(t, "same id", in.admin("POST", "/api/assets", `{"id":"my-template"}`), 409, mgmtErr("Found asset with the same ID"))
	expect(t, "update", in.admin("PUT", "/api/assets/my-template", `{"name":"T2","kind":"oas-template"}`), 200,
		`{"Status":"success","Message":"asset updated","Meta":"`+dbID+`"}`)
	list := in.admin("GET", "/api/assets", nil)
	if !strings.HasPrefix(string(list.body), `[{`) || !strings.Contains(string(list.body), `"name":"T2"`) {
		t.Fatalf("list: %s", list.body)
	}
	expect(t, "delete by _id", in.admin("DELETE", "/api/assets/"+dbID, nil), 200, `{"Status":"success","Message":"asset deleted","Meta":"`+dbID+`"}`)
	expect(t, "gone", in.admin("GET", "/api/assets/my-template", nil), 404, mgmtErr("Asset not found"))
	expect(t, "list empty again", in.admin("GET", "/api/assets", nil), 200, `[]`)
	checkStore(t, in)
}

// TestPolicyAssetNodePermissions: the Dashboard's areas policy, assets and
// system, read for GET and write for the rest, decided before any lookup.
func TestPolicyAssetNodePermissions(t *testing.T) {
	in := start(t, "")
	cases := []struct {
		perms                string
		polR, polW, asR, asW bool
		nodesR               bool
	}{
		{`{"policy":"read"}`, true, false, false, false, false},
		{`{"policy":"write"}`, true, true, false, false, false},
		{`{"assets":"read"}`, false, false, true, false, false},
		{`{"assets":"write","system":"read"}`, false, false, true, true, true},
		{`{"apis":"write"}`, false, false, false, false, false},
	}
	type call struct{ method, path, body string }
	for _, c := range cases {
		_, key := in.createUser(c.perms)
		for _, k := range []struct {
			call
			ok bool
		}{
			{call{"GET", "/api/portal/policies", ""}, c.polR},
			{call{"GET", "/api/portal/policies/missing", ""}, c.polR},
			{call{"POST", "/api/portal/policies", "not json"}, c.polW},
			{call{"DELETE", "/api/portal/policies/missing", ""}, c.polW},
			{call{"GET", "/api/assets/missing", ""}, c.asR},
			{call{"PUT", "/api/assets/missing", "{}"}, c.asW},
			{call{"GET", "/api/system/nodes", ""}, c.nodesR},
		} {
			r := in.do(k.method, k.path, key, nilIfEmpty(k.body))
			if k.ok && r.status == 403 || !k.ok && r.status != 403 {
				t.Errorf("%s: %s %s: %d %s", c.perms, k.method, k.path, r.status, r.body)
			}
			if !k.ok {
				expect(t, c.perms+" "+k.path, r, 403, mgmtErr("access denied: You do not have permission to access "+k.path))
			}
		}
	}
	expect(t, "nodes", in.admin("GET", "/api/system/nodes", nil), 200, `{"nodes":[]}`)
}

// checkStore verifies the store's indexes after a test (the service must be
// stopped: bbolt holds the file).
func checkStore(t *testing.T, in *instance) {
	t.Helper()
	in.stop()
	st := openStore(t, in.db)
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}
