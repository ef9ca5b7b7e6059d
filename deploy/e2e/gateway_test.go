package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/redistest"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
)

// gatewayJourney: a Tyk Gateway (the protocol double of pkg/tykgwtest)
// runs from the management binary started with a node secret and a real
// Redis: it registers and loads a classic API and a policy; the API is
// migrated to Tyk OAS, the gateway is notified within 1 s and loads the
// classic definition derived from the OAS document (is_oas true) beside
// the document; on shutdown it de-registers.
func gatewayJourney(t *testing.T) {
	rd := redistest.Start(t)
	const secret = "e2e-node-secret-0123456789abcdef"
	s := newService(t, "management", "NODE_SECRET="+secret, "GATEWAY_REDIS=redis://"+rd.Addr)
	admin := s.token
	const api = "6a7e0000000000000000000000000001"
	s.expect(t, http.StatusOK, "POST", "/api/apis", admin, `{"api_definition":{"name":"Gatewayed #shop","api_id":"`+api+`",
		"proxy":{"listen_path":"/gatewayed/","target_url":"http://upstream.internal/","strip_listen_path":true},
		"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}},"use_keyless":true,"active":true}}`)
	s.expect(t, http.StatusOK, "POST", "/api/portal/policies", admin,
		`{"id":"gold","name":"Gold","rate":100,"per":60,"access_rights":{"`+api+`":{"api_id":"`+api+`","versions":["Default"]}}}`)

	gw := tykgwtest.Start(tykgwtest.Config{Dashboard: s.url(""), NodeSecret: secret, Redis: rd.Addr, RegisterRetry: 100 * time.Millisecond})
	stopped := false
	defer func() {
		if !stopped {
			gw.Stop()
		}
	}()
	err := gw.WaitFor(15*time.Second, func(g *tykgwtest.Gateway) bool {
		return g.APIs()[api].Definition != nil && g.Policies()["gold"] != nil
	})
	if err != nil {
		t.Fatalf("the gateway did not load the classic API and the policy: %+v", gw.Stats())
	}
	if nodes := s.expect(t, http.StatusOK, "GET", "/api/system/nodes", admin, ""); !strings.Contains(string(nodes.body), gw.NodeID()) {
		t.Fatalf("GET /api/system/nodes: %s, want node %s", nodes.body, gw.NodeID())
	}

	s.expect(t, http.StatusOK, "POST", "/api/apis/migrate", admin, `{"mode":"direct","apiIDs":["`+api+`"]}`)
	migrated := time.Now()
	err = gw.WaitFor(10*time.Second, func(g *tykgwtest.Gateway) bool { return g.APIs()[api].OAS != nil })
	if err != nil {
		t.Fatalf("the gateway did not load the migrated API: %+v", gw.Stats())
	}
	notes := gw.Stats().Notifications
	if late := notes[len(notes)-1].Sub(migrated); late > time.Second {
		t.Errorf("the gateway was notified %v after the migration answered, want within 1 s", late)
	}
	a := gw.APIs()[api]
	def := a.Definition
	proxy, _ := def["proxy"].(map[string]any)
	if def["is_oas"] != true || def["api_id"] != api || proxy["listen_path"] != "/gatewayed/" || len(def["id"].(string)) != 24 {
		t.Errorf("derived classic definition: %v", def)
	}
	var doc struct {
		Gateway struct {
			Info struct {
				ID string `json:"id"`
			} `json:"info"`
		} `json:"x-tyk-api-gateway"`
	}
	if err := json.Unmarshal(a.OAS, &doc); err != nil || doc.Gateway.Info.ID != api {
		t.Errorf("the OAS document beside it: %v %s", err, a.OAS)
	}
	if gw.Policies()["gold"] == nil {
		t.Errorf("the policy is gone after the reload")
	}
	st := gw.Stats()
	if st.BadSignatures != 0 || len(st.Pitfalls) != 0 || len(st.Errors) != 0 {
		t.Errorf("gateway double: %+v", st)
	}

	gw.Stop()
	stopped = true
	s.expectJSON(t, http.StatusOK, `{"nodes":[]}`, "GET", "/api/system/nodes", admin, "")
}
