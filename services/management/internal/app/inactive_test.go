package app

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/redistest"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
)

// TestGatewayInactiveAPIs: a gateway serves whatever /system/apis sends, so
// an inactive API (classic `active: false`, Tyk OAS
// x-tyk-api-gateway.info.state.active false) is never sent; deactivating
// takes the API off a gateway within 1 s of the write (plus the double's
// 1 s reload tick), reactivating brings it back.
func TestGatewayInactiveAPIs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs redis-server and waits for heartbeats")
	}
	rd := redistest.Start(t)
	in := startGateways(t, "", "redis://"+rd.Addr)
	classic := "1ac70000000000000000000000000001"
	classicDef := func(active string) string {
		return `{"api_definition":{"api_id":"` + classic + `","name":"Switched","active":` + active + `,"proxy":{"listen_path":"/switched/","target_url":"http://u.test"}}}`
	}
	oas := "1ac70000000000000000000000000002"
	oasDef := func(active string) string {
		return strings.Replace(oasDoc(oas, "Switched OAS", "/switched-oas/"), `"active":true`, `"active":`+active, 1)
	}
	off := "1ac70000000000000000000000000003"
	expect(t, "classic", in.admin("POST", "/api/apis", classicDef("true")), 200, "")
	expect(t, "oas", in.admin("POST", "/api/apis/oas", oasDef("true")), 200, "")
	expect(t, "inactive from the start", in.admin("POST", "/api/apis", `{"api_definition":{"api_id":"`+off+`","name":"Off","active":false,"proxy":{"listen_path":"/off/","target_url":"http://u.test"}}}`), 200, "")

	gw := tykgwtest.Start(tykgwtest.Config{Dashboard: in.base, NodeSecret: nodeSecret, Redis: rd.Addr, RegisterRetry: 100 * time.Millisecond})
	defer gw.Stop()
	served := func(ids ...string) func(*tykgwtest.Gateway) bool {
		return func(g *tykgwtest.Gateway) bool {
			apis := g.APIs()
			if len(apis) != len(ids) {
				return false
			}
			for _, id := range ids {
				if apis[id].Definition == nil {
					return false
				}
			}
			return true
		}
	}
	if err := gw.WaitFor(10*time.Second, served(classic, oas)); err != nil {
		t.Fatalf("want the two active APIs loaded and the inactive one not: %v, loaded %d APIs", err, len(gw.APIs()))
	}

	step := func(what, method, path, body string, want ...string) {
		t.Helper()
		at := time.Now()
		expect(t, what, in.admin(method, path, body), 200, "")
		if err := gw.WaitFor(5*time.Second, served(want...)); err != nil {
			t.Fatalf("%s: the gateway's APIs are not %v: %v", what, want, err)
		}
		if took := time.Since(at); took > 2*time.Second {
			t.Errorf("%s: the gateway's APIs changed after %v, want within 1 s plus the double's 1 s reload", what, took)
		}
	}
	step("deactivate classic", "PUT", "/api/apis/"+classic, classicDef("false"), oas)
	step("deactivate OAS", "PUT", "/api/apis/oas/"+oas, oasDef("false"))
	step("reactivate OAS", "PUT", "/api/apis/oas/"+oas, oasDef("true"), oas)
	step("reactivate classic", "PUT", "/api/apis/"+classic, classicDef("true"), classic, oas)
	if st := gw.Stats(); st.BadSignatures != 0 || len(st.Pitfalls) != 0 {
		t.Fatalf("double: %+v", st)
	}
}
