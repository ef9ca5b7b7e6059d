package app

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/pkg/redistest"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
)

// TestConsumerFlowRealGateway is the consumer flow with a real Tyk Gateway
// (make test-gateway TYK_GATEWAY=<binary>; skipped without it): the gateway
// runs in dashboard mode against the management binary, which issues keys
// through the gateway's own API. A developer registers, is activated,
// creates an app and asks for access; the approval's key, read from the app
// page, is let through by the gateway; suspension makes the gateway refuse
// it within 1 s (the key is deleted: Tyk ignores a policy-bound key's own
// is_inactive), reactivation issues a new key shown once on the app page,
// which the gateway lets through, and revocation refuses it within 1 s.
func TestConsumerFlowRealGateway(t *testing.T) {
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gwPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	gwBase := "http://127.0.0.1:" + strconv.Itoa(gwPort)
	const nodeSecret = "node-secret-for-the-portal-tests"

	w := startConsumerWorldWith(t, func(file func(name, content string) string) []string {
		return []string{"--node-secret-file", file("node.secret", nodeSecret), "--gateway-redis", "redis://" + rd.Addr,
			"--gateway-api-url", gwBase, "--gateway-api-secret-file", file("gw.secret", gwSecret)}
	}, `"use_keyless":false,"use_standard_auth":true,"auth":{"auth_header_name":"Authorization"},`+
		`"proxy":{"listen_path":"/pay/","target_url":"`+upstream.URL+`","strip_listen_path":true},`+
		`"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}}`)
	tykgwtest.StartDashboard(t, tykgwtest.Dashboard{Bin: bin, Port: gwPort, Management: "http://" + w.mgmt.HTTPAddr, Redis: rd.Addr, NodeSecret: nodeSecret, APISecret: gwSecret})
	call := func(key string) int {
		req, _ := http.NewRequest("GET", gwBase+"/pay/charges", nil)
		req.Header.Set("Authorization", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("call through the gateway: %v", err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	within(t, 30*time.Second, "the gateway to load the API", func() bool { s := call("none"); return s == 401 || s == 403 })

	p := w.p
	dev := newDeveloper(t, p.site)
	dev.register("ana@example.com")
	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":true}`), 200, "activate")
	dev.login("ana@example.com")
	dev.submit("/apps", "/apps", "name", "Shop", "description", "")
	form := "/products/" + w.product + "/access"
	if s, body := dev.submit(form, form, "app", "1", "plan", w.plan); s != 200 {
		t.Fatalf("request access: %d %s", s, body)
	}
	p.expect(p.do("PUT", "/portal-api/access-requests/"+w.pendingRequest(t)+"/approve", ""), 200, "approve")
	_, page := dev.get("/apps/1")
	m := regexp.MustCompile(`<code class="key">([^<]+)</code>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the app page shows no new key: %s", page)
	}
	key := m[1]
	if s := call(key); s != 200 {
		t.Fatalf("the approved key through the gateway: %d, want 200", s)
	}

	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":false}`), 200, "suspend")
	within(t, time.Second, "the suspended developer's key to be refused", func() bool { s := call(key); return s == 401 || s == 403 })
	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":true}`), 200, "reactivate")
	dev.login("ana@example.com") // suspension ended the session
	_, page = dev.get("/apps/1")
	if m = regexp.MustCompile(`<code class="key">([^<]+)</code>`).FindStringSubmatch(page); m == nil || m[1] == key {
		t.Fatalf("the reactivated developer's app page shows no new key: %s", page)
	}
	if old := call(key); old != 401 && old != 403 {
		t.Fatalf("the key from before the suspension: %d", old)
	}
	key = m[1]
	within(t, time.Second, "the reissued key to work", func() bool { return call(key) == 200 })

	app := p.expect(p.do("GET", "/portal-api/apps/1", ""), 200, "app").(map[string]any)
	cred := app["Credentials"].([]any)[0].(map[string]any)["ID"].(json.Number).String()
	p.expect(p.do("DELETE", "/portal-api/apps/1/credentials/"+cred, ""), 200, "revoke")
	within(t, time.Second, "the revoked key to be refused", func() bool { s := call(key); return s == 401 || s == 403 })
}

func within(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
