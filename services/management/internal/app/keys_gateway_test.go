package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/redistest"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
)

// TestKeysRealGateway issues keys through management to a real Tyk Gateway
// (make test-gateway TYK_GATEWAY=<binary>; skipped without it): the gateway
// runs in dashboard mode against management, with hash_keys on and
// management's --gateway-api-url pointing at it. The gateway hashes keys
// with murmur64 (hash_key_function): with the default (murmur32) Tyk
// v5.11.1 caches sessions under a murmur64 name but clears the murmur32
// one after a key API change, so updates and deletions would wait for
// the cache's 10 s. An API with auth_token and
// a policy of 3 requests per 10 s: the key issued from the policy is let
// through (200) at once, the fourth call is rate limited (429), the key
// moved to a policy without that limit is let through again, and once
// deleted it is refused within 1 s.
func TestKeysRealGateway(t *testing.T) {
	bin := os.Getenv("TYK_GATEWAY")
	if bin == "" {
		t.Skip("TYK_GATEWAY is not set: this test needs a Tyk Gateway binary (make test-gateway TYK_GATEWAY=<binary>); not part of make test")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("TYK_GATEWAY=%s: %v", bin, err)
	}
	rd := redistest.Start(t)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "upstream "+r.URL.Path) }))
	t.Cleanup(upstream.Close)

	gwPort := freeTCPPort(t)
	gwBase := "http://127.0.0.1:" + strconv.Itoa(gwPort)
	db := t.TempDir() + "/management.db"
	si := servertest.Start(t, Serve, db, adminToken, func(c *config.Config) {
		c.Gateways = config.Gateways{NodeSecret: nodeSecret, Redis: "redis://" + rd.Addr, APIURL: gwBase, APISecret: gatewaySecret}
	})
	in := &instance{t: t, db: db, base: si.Base, conn: si.Conn, stop: si.Stop}

	api := "4b1e00000000000000000000000000aa"
	def := fmt.Sprintf(`{"api_definition":{"api_id":%q,"name":"Keyed","active":true,"use_keyless":false,"use_standard_auth":true,
		"auth":{"auth_header_name":"Authorization"},"proxy":{"listen_path":"/keyed/","target_url":%q,"strip_listen_path":true},
		"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}}}}`, api, upstream.URL)
	expect(t, "api", in.admin("POST", "/api/apis", def), 200, "")
	rights := fmt.Sprintf(`{%q:{"api_id":%q,"api_name":"Keyed","versions":["Default"]}}`, api, api)
	expect(t, "slow policy", in.admin("POST", "/api/portal/policies", `{"id":"slow","name":"Slow","rate":3,"per":10,"quota_max":-1,"active":true,"access_rights":`+rights+`}`), 200, "")
	expect(t, "fast policy", in.admin("POST", "/api/portal/policies", `{"id":"fast","name":"Fast","rate":1000,"per":1,"quota_max":-1,"active":true,"access_rights":`+rights+`}`), 200, "")

	tykgwtest.StartDashboard(t, tykgwtest.Dashboard{Bin: bin, Port: gwPort, Management: in.base, Redis: rd.Addr, NodeSecret: nodeSecret, APISecret: gatewaySecret})
	call := func(key string) int {
		req, _ := http.NewRequest("GET", gwBase+"/keyed/anything", nil)
		req.Header.Set("Authorization", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("call through the gateway: %v", err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	// the gateway loads the API from management (dashboard mode)
	waitFor(t, 30*time.Second, "the gateway to load the API", func() bool { s := call("none"); return s == 401 || s == 403 })

	r := in.admin("POST", "/api/keys", `{"alias":"real","apply_policies":["slow"]}`)
	expect(t, "create", r, 200, "")
	var created keyData
	json.Unmarshal(r.body, &created)
	issued := time.Now()
	var got []int
	for i := 0; i < 4; i++ {
		got = append(got, call(created.KeyID))
	}
	t.Logf("issued key: %v (%v after the answer)", got, time.Since(issued))
	if fmt.Sprint(got) != "[200 200 200 429]" {
		t.Fatalf("calls with the key from the 3-per-10-s policy: %v, want [200 200 200 429]", got)
	}

	// management's name for the key is the gateway's hash
	r = in.admin("GET", "/api/keys/"+created.KeyHash+"?hashed=1", nil)
	expect(t, "get by hash", r, 200, "")
	r = in.admin("GET", "/api/keys/"+created.KeyID, nil)
	expect(t, "get by key (management hashes it as the gateway does)", r, 200, "")

	// The gateway's default rate limiter (DRL, one gateway) keys its bucket
	// by the session's last_updated, in whole seconds, which an update sets:
	// an update within the second the key was created keeps the old bucket
	// for its period. Wait for the next second, as a real user would.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	r = in.admin("PUT", "/api/keys/"+created.KeyHash+"?hashed=1", `{"alias":"real","apply_policies":["fast"]}`)
	expect(t, "update to the fast policy", r, 200, "")
	updated := time.Now()
	waitFor(t, time.Second, "the fast policy to take effect", func() bool { return call(created.KeyID) == 200 })
	t.Logf("the fast policy took effect %v after the answer", time.Since(updated))

	// the rest of the dashboard SDK's KeysAPI, with the real gateway behind
	expect(t, "preview", in.admin("POST", "/api/keys/preview", `{"apply_policies":["slow"]}`), 200, "")
	for _, path := range []string{"/api/apis/keys?p=1", "/api/keys/detailed?q=real", "/api/apis/" + api + "/keys?p=1", "/api/apis/" + api + "/keys/search?q=real"} {
		r = in.admin("GET", path, nil)
		if r.status != 200 || !strings.Contains(string(r.body), created.KeyHash) || strings.Contains(string(r.body), created.KeyID) {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
	}
	r = in.admin("GET", "/api/apis/"+api+"/keys/"+created.KeyHash+"?hashed=1", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"apply_policies":["fast"]`) {
		t.Fatalf("GET the key under its API: %d %s", r.status, r.body)
	}
	expect(t, "update under its API", in.admin("PUT", "/api/apis/"+api+"/keys/"+created.KeyHash, `{"alias":"real again","apply_policies":["fast"]}`), 200, "")
	expect(t, "delete", in.admin("DELETE", "/api/keys/"+created.KeyHash, nil), 200, "")
	deleted := time.Now()
	last := 0
	waitFor(t, time.Second, "the deleted key to be refused", func() bool { last = call(created.KeyID); return last == 401 || last == 403 })
	t.Logf("deleted key: %d", last)
	t.Logf("deleted key refused %v after the answer", time.Since(deleted))

	// a custom key works too, through the direct access_rights
	r = in.admin("POST", "/api/keys/custom-real-key", `{"access_rights":`+rights+`}`)
	expect(t, "custom", r, 200, "")
	var custom keyData
	json.Unmarshal(r.body, &custom)
	if s := call(custom.KeyID); s != 200 {
		t.Fatalf("custom key %q: %d", custom.KeyID, s)
	}
	// deactivated, it is refused (a key with policies takes its state from
	// them: Tyk ignores a policy-bound session's own is_inactive)
	expect(t, "deactivate", in.admin("PUT", "/api/keys/"+custom.KeyID, `{"access_rights":`+rights+`,"is_inactive":true}`), 200, "")
	waitFor(t, time.Second, "the deactivated key to be refused", func() bool { return call(custom.KeyID) != 200 })
	expect(t, "API in use", in.admin("DELETE", "/api/apis/"+api, nil), 409, "")
	expect(t, "delete custom under its API", in.admin("DELETE", "/api/apis/"+api+"/keys/"+custom.KeyID, nil), 200, "")
	if s := call(custom.KeyID); s != 401 && s != 403 {
		t.Fatalf("deleted custom key: %d", s)
	}
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
