package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/kv/boltkv"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

// TestGatewayFieldTypes (issue 32): a policy or classic definition whose
// field (nested ones too) has a type the gateway cannot decode is refused
// 400 naming the field; one stored before the check is left out of its gateway list (with
// the others still listed), logged and counted, instead of failing the
// gateway's whole list.
func TestGatewayFieldTypes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	in := startGateways(t, db, "")
	expect(t, "rate as text", in.admin("POST", "/api/portal/policies", `{"name":"p","rate":"fast"}`), 400, mgmtErr("rate must be a number"))
	expect(t, "active as text", in.admin("POST", "/api/apis", strings.Replace(classicBody("a0000000000000000000000000000001", "A"), `"name"`, `"active":"yes","name"`, 1)),
		400, mgmtErr("api_definition.active must be a boolean"))
	expect(t, "nested policy field", in.admin("POST", "/api/portal/policies", `{"name":"p","access_rights":{"a":{"api_id":"a","limit":{"quota_max":"10"}}}}`),
		400, mgmtErr("access_rights.a.limit.quota_max must be an integer"))
	expect(t, "nested classic field", in.admin("POST", "/api/apis", strings.Replace(classicBody("a0000000000000000000000000000001", "A"), `"name"`,
		`"version_data":{"versions":{"Default":{"extended_paths":{"url_rewrites":[{"path":"/a","method":5}]}}}},"name"`, 1)),
		400, mgmtErr("api_definition.version_data.versions.Default.extended_paths.url_rewrites[0].method must be a string"))
	expect(t, "good policy", in.admin("POST", "/api/portal/policies", policyBody("good")), 200, "")
	expect(t, "good API", in.admin("POST", "/api/apis", classicBody("a0000000000000000000000000000002", "Good")), 200, "")
	in.stop()

	// Records written before the check, straight into the store.
	e, err := boltkv.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateDoc(context.Background(), store.Policies, "", func(dbID string) (string, []byte, error) {
		return "bad", []byte(`{"_id":"` + dbID + `","id":"bad","name":"bad","rate":"fast"}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.CreateDoc(context.Background(), store.Policies, "", func(dbID string) (string, []byte, error) {
		return "bad-nested", []byte(`{"_id":"` + dbID + `","id":"bad-nested","name":"bad-nested","access_rights":{"a":{"allowed_urls":[{"url":"/a","methods":"GET"}]}}}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(classicBody("a0000000000000000000000000000003", "Bad"), `"name"`, `"CORS":{"enable":true,"max_age":"1h"},"name"`, 1)
	def := bad[len(`{"api_definition":`) : len(bad)-1]
	if err := st.CreateAPI(context.Background(), store.API{ID: "a0000000000000000000000000000003", DBID: "00000000000000000000bad3", Kind: store.Classic, Doc: []byte(def)}); err != nil {
		t.Fatal(err)
	}
	e.Close()

	in = startGateways(t, db, "")
	apis := string(in.do("GET", "/system/apis", nodeSecret, nil).body)
	if !strings.Contains(apis, "a0000000000000000000000000000002") || strings.Contains(apis, "a0000000000000000000000000000003") {
		t.Errorf("/system/apis: %.400s, want the good API and not the one a gateway cannot decode", apis)
	}
	policies := in.do("GET", "/system/policies", nodeSecret, nil)
	if expect(t, "policies", policies, 200, ""); !strings.Contains(string(policies.body), `"good"`) || strings.Contains(string(policies.body), `"fast"`) || strings.Contains(string(policies.body), `bad-nested`) {
		t.Errorf("/system/policies: %s, want the good policy alone", policies.body)
	}
	m := string(in.do("GET", "/metrics", "", nil).body)
	for _, list := range []string{"apis", "policies"} {
		if !strings.Contains(m, `gatehouse_gateway_records_skipped_total{list="`+list+`"}`) {
			t.Errorf("no gatehouse_gateway_records_skipped_total for %s", list)
		}
	}
}
