package app

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gatehouse/gatehouse/pkg/binproc"
	"github.com/gatehouse/gatehouse/pkg/browsertest"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
)

// consumerWorld is the consumer flow's real parts: the management and
// portal binaries on loopback, management issuing keys through the gateway
// double's key API, one API and the policy "gold" granting it in
// management, and in the portal a plan on that policy offered by a product.
type consumerWorld struct {
	gw               *tykgwtest.KeyAPI
	mgmt, portal     *binproc.Process
	mgmtKey, portKey string
	api              string // the management API ID the policy grants
	p                *portal
	product, plan    string
	startPortal      func() // (re)starts the portal on its store
}

const gwSecret = "gateway-api-secret-for-the-portal-tests"

func startConsumerWorld(t testing.TB) *consumerWorld {
	t.Helper()
	return startConsumerWorldWith(t, nil, `"proxy":{"listen_path":"/pay/","target_url":"http://127.0.0.1:9"}`)
}

// startConsumerWorldWith starts it with management's gateway settings given
// by gateway (nil: the gateway double's key API, started here) and the
// API's definition members apiMembers.
func startConsumerWorldWith(t testing.TB, gateway func(file func(name, content string) string) []string, apiMembers string) *consumerWorld {
	t.Helper()
	bins, err := binproc.Build(filepath.Join("..", "..", "..", ".."), t.TempDir(), []string{"management", "portal"})
	if err != nil {
		t.Fatal(err)
	}
	w := &consumerWorld{api: "4b1e0000000000000000000000000001", mgmtKey: binproc.RandomToken(t), portKey: binproc.RandomToken(t)}
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if gateway == nil {
		if w.gw, err = tykgwtest.StartKeyAPI(gwSecret); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.gw.Close)
		gateway = func(file func(name, content string) string) []string {
			return []string{"--gateway-api-url", w.gw.URL, "--gateway-api-secret-file", file("gw.secret", gwSecret)}
		}
	}
	base := []string{"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"}
	w.mgmt = binproc.Start(t, bins["management"], append(append(base, "--db", filepath.Join(dir, "management.db"),
		"--bootstrap-token-file", file("mgmt.token", w.mgmtKey)), gateway(file)...), nil, nil, dir)
	w.admin("POST", "/api/apis", `{"api_definition":{"api_id":"`+w.api+`","name":"Payments",`+apiMembers+`,"active":true}}`, 200)
	w.admin("POST", "/api/portal/policies", `{"id":"gold","name":"Gold","rate":5,"per":1,"access_rights":{"`+w.api+`":{"api_id":"`+w.api+`","versions":["Default"]}}}`, 200)
	portalArgs := append(base, "--db", filepath.Join(dir, "portal.db"), "--site-addr", "127.0.0.1:0",
		"--bootstrap-token-file", file("portal.token", w.portKey),
		"--management-grpc-addr", w.mgmt.GRPCAddr, "--management-key-file", file("mgmt.key", w.mgmtKey))
	w.startPortal = func() {
		w.portal = binproc.Start(t, bins["portal"], portalArgs, nil, nil, dir)
		w.p = &portal{t: t, base: "http://" + w.portal.HTTPAddr, site: "http://" + w.portal.SiteAddr, key: w.portKey}
	}
	w.startPortal()
	w.plan = w.p.id(w.p.expect(w.p.do("POST", "/portal-api/plans", `{"Name":"Gold","PolicyID":"gold"}`), 201, "plan"))
	w.product = w.p.id(w.p.expect(w.p.do("POST", "/portal-api/products", `{"Name":"payments","DisplayName":"Payments API","PlanIDs":["`+w.plan+`"]}`), 201, "product"))
	w.p.expect(w.p.do("POST", "/portal-api/products/"+w.product+"/docs", `{"Title":"Getting started","Status":"published","Content":"<p>Ask for a key.</p>"}`), 201, "page")
	return w
}

// admin calls management's REST API with its admin key.
func (w *consumerWorld) admin(method, path, body string, want int) []byte {
	req, _ := http.NewRequest(method, "http://"+w.mgmt.HTTPAddr+path, strings.NewReader(body))
	req.Header.Set("Authorization", w.mgmtKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		panic(method + " " + path + ": " + res.Status + " " + string(b))
	}
	return b
}

// pendingRequest is the one pending access request's ID.
func (w *consumerWorld) pendingRequest(t *testing.T) string {
	t.Helper()
	list := w.p.expect(w.p.do("GET", "/portal-api/access-requests?status=pending", ""), 200, "pending").([]any)
	if len(list) != 1 {
		t.Fatalf("pending requests %v, want one", list)
	}
	return w.p.id(list[0])
}

// TestConsumerFlowInBrowser drives the developer's side in Chromium and the
// admin's side over REST: register → activation → log in → create an app
// (its name carries a script) → request access → approval → the key shown
// once → the gateway accepts it → it is shown no more → roll → revoke →
// refused; then suspension and deletion end the session.
func TestConsumerFlowInBrowser(t *testing.T) {
	// the README's screenshots: written to $GATEHOUSE_SCREENSHOTS when set
	// (services/portal/docs/consumers), else none
	b := browsertest.New(t, browsertest.Options{ShotsEnv: "GATEHOUSE_SCREENSHOTS"})
	w := startConsumerWorld(t)
	p := w.p
	site := p.site
	shot := b.Shot
	fill := func(fields map[string]string) {
		t.Helper()
		for name, v := range fields {
			b.Do("fill "+name, chromedp.SetValue(chromedp.CSS(`[name="`+name+`"]`), v))
		}
	}
	submit := func(form string) int64 {
		t.Helper()
		return b.Follow(form + ` button[type="submit"]`)
	}

	b.Open(site + "/auth/register")
	fill(map[string]string{"email": "ana@example.com", "name": "Ana", "password": "correct horse battery"})
	shot("register")
	if got := submit(`form[action="/auth/register"]`); got != 201 {
		t.Fatalf("register: %d", got)
	}
	shot("awaits-activation")
	b.Open(site + "/auth/login")
	fill(map[string]string{"email": "ana@example.com", "password": "correct horse battery"})
	if got := submit(`form[action="/auth/login"]`); got != 401 {
		t.Fatalf("login before activation: %d, want 401", got)
	}
	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":true}`), 200, "activate")
	fill(map[string]string{"email": "ana@example.com", "password": "correct horse battery"})
	if got := submit(`form[action="/auth/login"]`); got != 200 || b.Text("h1") != "My apps" {
		t.Fatalf("login: %d", got)
	}
	xss := `Shop <img src=x onerror="window.__xss=1"><script>window.__xss=1</script>`
	fill(map[string]string{"name": xss, "description": "Sells things."})
	shot("my-apps")
	if got := submit(`form[action="/apps"]`); got != 200 || b.Text("h1") != xss {
		t.Fatalf("create app: %d, h1 %q", got, b.Text("h1"))
	}
	b.Open(site + "/products/" + w.product)
	if got := b.Follow(`a[href="/products/` + w.product + `/access"]`); got != 200 {
		t.Fatalf("access form: %d", got)
	}
	shot("request-access")
	if got := submit(`form[action="/products/` + w.product + `/access"]`); got != 200 {
		t.Fatalf("request access: %d", got)
	}
	if s := b.Text(".requests .status"); s != "pending" {
		t.Fatalf("request status %q", s)
	}

	// the admin approves: management issues the key through the gateway
	approved := p.expect(p.do("PUT", "/portal-api/access-requests/"+w.pendingRequest(t)+"/approve", ""), 200, "approve").(map[string]any)
	if approved["Status"] != "approved" {
		t.Fatalf("approve: %v", approved)
	}
	app := p.expect(p.do("GET", "/portal-api/apps/1", ""), 200, "app").(map[string]any)
	creds := app["Credentials"].([]any)
	hash := creds[0].(map[string]any)["KeyHash"].(string)
	sess, ok := w.gw.Session(hash)
	if !ok || !bytes.Contains(sess, []byte(`"portal_app_id":"1"`)) || !bytes.Contains(sess, []byte(`"apply_policies":["gold"]`)) {
		t.Fatalf("the gateway holds %s (%v)", sess, ok)
	}
	var held struct{ Alias string }
	json.Unmarshal(sess, &held)
	if held.Alias != xss+" (ana@example.com)" {
		t.Errorf("alias %q", held.Alias)
	}

	b.Open(site + "/apps/1")
	shot("key-shown-once")
	key := b.Text("code.key")
	if !w.gw.Accepts(key, w.api) {
		t.Fatalf("the gateway refuses the key shown (%d characters)", len(key))
	}
	if browsertest.Eval[bool](b, `window.__xss === 1`) {
		t.Fatal("the app name ran a script")
	}
	b.Open(site + "/apps/1")
	if n := browsertest.Eval[int](b, `document.querySelectorAll('code.key').length`); n != 0 || !strings.HasSuffix(b.Text(".credentials td:nth-child(3)"), key[len(key)-4:]) {
		t.Fatalf("second view shows %d full keys, cell %q", n, b.Text(".credentials td:nth-child(3)"))
	}
	shot("key-afterwards")

	// roll: a new key, shown once; the old one stops
	if got := submit(`form[action="/apps/1/credentials/` + creds[0].(map[string]any)["ID"].(json.Number).String() + `/roll"]`); got != 200 {
		t.Fatalf("roll: %d", got)
	}
	rolled := b.Text("code.key")
	if rolled == key || !w.gw.Accepts(rolled, w.api) || w.gw.Accepts(key, w.api) {
		t.Fatal("after a roll the new key must work and the old one not")
	}

	// revoke: management deletes the key, the gateway refuses it
	p.expect(p.do("DELETE", "/portal-api/apps/1/credentials/"+creds[0].(map[string]any)["ID"].(json.Number).String(), ""), 200, "revoke")
	if w.gw.Accepts(rolled, w.api) || w.gw.Len() != 0 {
		t.Fatalf("revoked key still held (%d keys)", w.gw.Len())
	}

	// suspension ends the session at once
	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":false}`), 200, "suspend")
	b.Open(site + "/apps")
	if h := b.Text("h1"); h != "Log in" {
		t.Fatalf("a suspended developer's page: %q", h)
	}
}

// BenchmarkApproval is one approval end to end: the portal's REST call,
// its gRPC call to management, management's call to the gateway double's
// key API (in this process, answering in microseconds), the records
// written on both sides. Each request is filed through the developer
// pages outside the timer.
func BenchmarkApproval(b *testing.B) {
	w := startConsumerWorld(b)
	p := w.p
	dev := newDeveloper(b, p.site)
	dev.register("ana@example.com")
	p.expect(p.do("PUT", "/portal-api/users/1", `{"Active":true}`), 200, "activate")
	dev.login("ana@example.com")
	form := "/products/" + w.product + "/access"
	app := 0
	b.ReportAllocs()
	for i := range b.N {
		b.StopTimer()
		if i%50 == 0 { // a fresh app now and then keeps each app's record small
			dev.submit("/apps", "/apps", "name", "bench", "description", "")
			app++
		}
		if s, body := dev.submit(form, form, "app", strconv.Itoa(app), "plan", w.plan); s != 200 {
			b.Fatalf("request access: %d %s", s, body)
		}
		b.StartTimer()
		p.expect(p.do("PUT", "/portal-api/access-requests/"+strconv.Itoa(i+1)+"/approve", ""), 200, "approve")
	}
}

// approvedApp registers and activates a developer with one app that holds
// one approved credential; it returns the developer's browser and the key.
func (w *consumerWorld) approvedApp(t *testing.T) (*developer, string) {
	t.Helper()
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
	id := w.pendingRequest(t)
	w.gw.Down(true)
	msgs := p.errorsOf(p.do("PUT", "/portal-api/access-requests/"+id+"/approve", ""), 503, "approve with the gateway down")
	if !strings.Contains(msgs[0], "Management did not answer") && !strings.Contains(msgs[0], "Management refused") {
		t.Errorf("failed approval: %v", msgs)
	}
	req := p.expect(p.do("GET", "/portal-api/access-requests?status=pending", ""), 200, "pending").([]any)[0].(map[string]any)
	app := p.expect(p.do("GET", "/portal-api/apps/1", ""), 200, "app").(map[string]any)
	if req["Error"] == "" || len(app["Credentials"].([]any)) != 0 || w.gw.Len() != 0 {
		t.Fatalf("after a failed approval: request %v, app %v, %d keys: want it pending with the error, nothing made", req, app, w.gw.Len())
	}
	w.gw.Down(false)
	p.expect(p.do("PUT", "/portal-api/access-requests/"+id+"/approve", ""), 200, "approve")
	_, page := dev.get("/apps/1")
	m := keyOnPage.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no key on the app page: %s", page)
	}
	return dev, m[1]
}

var keyOnPage = regexp.MustCompile(`<code class="key">([^<]+)</code>`)

// TestApprovalFailureAndReconciliation: with the gateway down an approval
// answers 503 and leaves the request pending with its error and nothing
// made; approved once it is up. A restart of the portal then reconciles:
// a key management holds for a portal app that no credential records is
// deleted, and a credential whose key management lost is removed and its
// request pending again.
func TestApprovalFailureAndReconciliation(t *testing.T) {
	w := startConsumerWorld(t)
	_, key := w.approvedApp(t)
	if !w.gw.Accepts(key, w.api) {
		t.Fatal("approved key refused")
	}
	orphan := w.admin("POST", "/api/keys", `{"apply_policies":["gold"],"alias":"crashed approval","meta_data":{"portal_app_id":"1","portal_user_id":"1"}}`, 200)
	var o struct {
		Key string `json:"key_id"`
	}
	json.Unmarshal(orphan, &o)
	w.admin("DELETE", "/api/keys/"+tykgwtest.KeyHash(key), "", 200) // management loses the approved key
	w.portal.Stop(t, 15*time.Second)
	w.startPortal()
	p := w.p
	within(t, 10*time.Second, "reconciliation", func() bool { return w.gw.Len() == 0 })
	if w.gw.Accepts(o.Key, w.api) {
		t.Fatal("the orphan key survived reconciliation")
	}
	within(t, 10*time.Second, "the request to be pending again", func() bool {
		return len(p.expect(p.do("GET", "/portal-api/access-requests?status=pending", ""), 200, "pending").([]any)) == 1
	})
	app := p.expect(p.do("GET", "/portal-api/apps/1", ""), 200, "app").(map[string]any)
	if len(app["Credentials"].([]any)) != 0 {
		t.Fatalf("the credential without a key is still listed: %v", app)
	}
}
