package app

import (
	"strings"
	"testing"
)

// TestOASAPIVersions restates the dashboard SDK's listOASApiVersions
// (GET /api/apis/oas/{apiId}/versions, searchText, accessType): the base
// and each of its versions, in the Dashboard's VersionMetas shape.
func TestOASAPIVersions(t *testing.T) {
	in := start(t, "")
	id := "7e500000000000000000000000000001"
	classic := `{"api_definition":{"api_id":"` + id + `","name":"Versioned","active":true,"use_keyless":true,` +
		`"proxy":{"listen_path":"/versioned/","target_url":"http://u.test"},` +
		`"definition":{"location":"header","key":"x-api-version"},` +
		`"version_data":{"not_versioned":false,"default_version":"v1","versions":{` +
		`"v1":{"name":"v1","expires":"2030-01-02 10:00"},"v2":{"name":"v2"},"beta":{"name":"beta"}}}}}`
	expect(t, "classic", in.admin("POST", "/api/apis", classic), 200, "")
	r := in.admin("POST", "/api/apis/migrate", `{"mode":"direct","apiIDs":["`+id+`"]}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"success":{"count":1`) {
		t.Fatalf("migrate: %d %s", r.status, r.body)
	}
	list := in.admin("GET", "/api/apis/oas/"+id+"/versions", nil)
	if list.status != 200 {
		t.Fatalf("versions: %d %s", list.status, list.body)
	}
	v := list.json(t)
	apis := v["apis"].([]any)
	if len(apis) != 3 || v["pages"] == nil {
		t.Fatalf("versions: %s", list.body)
	}
	names := map[string]map[string]any{}
	for _, a := range apis {
		m := a.(map[string]any)
		names[m["versionName"].(string)] = m
		for _, k := range []string{"id", "name", "versionName", "internal", "isDefaultVersion", "expirationDate"} {
			if _, ok := m[k]; !ok {
				t.Errorf("version item without %s: %v", k, m)
			}
		}
	}
	base := apis[0].(map[string]any)
	if base["id"] != id || base["isDefaultVersion"] != true || base["internal"] != false {
		t.Errorf("the base first, default, external: %v", base)
	}
	if names["v2"] == nil || names["v2"]["internal"] != true || names["v2"]["isDefaultVersion"] != false || names["beta"] == nil {
		t.Errorf("child versions: %s", list.body)
	}
	for q, want := range map[string]int{"?searchText=V2": 1, "?accessType=internal": 2, "?accessType=external": 1, "?searchText=nothing": 0} {
		got := in.admin("GET", "/api/apis/oas/"+id+"/versions"+q, nil).json(t)["apis"].([]any)
		if len(got) != want {
			t.Errorf("versions%s: %d items, want %d", q, len(got), want)
		}
	}
	expect(t, "no such API", in.admin("GET", "/api/apis/oas/nope/versions", nil), 404, mgmtErr("Could not retrieve API detail."))
	expect(t, "classic API", in.admin("POST", "/api/apis", classicBody("7e500000000000000000000000000002", "C")), 200, "")
	expect(t, "a classic API has no OAS versions", in.admin("GET", "/api/apis/oas/7e500000000000000000000000000002/versions", nil), 404, mgmtErr("Could not retrieve API detail."))
	_, key := in.createUser(`{"policy":"read"}`)
	expect(t, "needs apis read", in.do("GET", "/api/apis/oas/"+id+"/versions", key, nil), 403, "")
}
