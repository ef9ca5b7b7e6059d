package app

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The web UI (CONTRACT §7) over plain HTTP: sessions, CSRF, permissions,
// escaping. TestUIBrowser drives the same flow in Chromium. None of these
// runs in parallel: TestUISessionExpiry moves the UI's clock.

// uiClient is one browser's cookies.
type uiClient struct {
	t    testing.TB
	base string
	c    *http.Client
}

func newUIClient(t testing.TB, base string) *uiClient {
	jar, _ := cookiejar.New(nil)
	return &uiClient{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type uiResp struct {
	status int
	header http.Header
	body   string
}

func (c *uiClient) do(method, path string, form url.Values, headers ...string) uiResp {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return uiResp{res.StatusCode, res.Header, string(b)}
}

func (c *uiClient) get(path string) uiResp { c.t.Helper(); return c.do("GET", path, nil) }

// login signs in with key and checks it lands on the APIs page.
func (c *uiClient) login(key string) {
	c.t.Helper()
	r := c.do("POST", "/ui/login", url.Values{"key": {key}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/apis" {
		c.t.Fatalf("sign in: %d %s, want 303 to /ui/apis: %s", r.status, r.header.Get("Location"), r.body)
	}
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// csrf is the token of the session, read from a page.
func (c *uiClient) csrf() string {
	c.t.Helper()
	m := csrfRE.FindStringSubmatch(c.get("/ui/apis").body)
	if m == nil {
		c.t.Fatal("no CSRF token on /ui/apis")
	}
	return m[1]
}

func wantPage(t *testing.T, what string, r uiResp, status int, contains ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.status, status, r.body)
	}
	for _, s := range contains {
		if !strings.Contains(r.body, s) {
			t.Fatalf("%s: page lacks %q: %s", what, s, r.body)
		}
	}
}

// The three classic APIs of the migration tests: one that converts
// cleanly, one whose conversion warns (a future expiry: the migrated API
// sends no X-Tyk-Api-Expires), one that fails (transform_jq has no Tyk OAS
// form).
const (
	xssName     = `Orders <script>window.__xss=1</script> "q" #shop`
	expiryWarn  = "X-Tyk-Api-Expires"
	jqFailure   = "transform_jq"
	xssPolicy   = `<img src=x onerror=window.__xss=2>`
	xssDesc     = `<svg onload=window.__xss=3>`
	versionData = `"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"%s}}}`
)

func classicUI(id, name, listen, version string) string {
	return fmt.Sprintf(`{"api_definition":{"api_id":%q,"name":%q,"description":%q,"active":true,"use_keyless":true,"proxy":{"listen_path":%q,"target_url":"http://u.test"},`+versionData+`}}`,
		id, name, xssDesc, listen, version)
}

// seedUI creates the three classic APIs and returns their IDs: clean,
// warning, failing.
func seedUI(t *testing.T, in *instance) [3]string {
	t.Helper()
	ids := [3]string{"ui-clean-api", "ui-warn-api", "ui-fail-api"}
	bodies := []string{
		classicUI(ids[0], xssName, "/orders/", ""),
		classicUI(ids[1], "Expiring", "/expiring/", `,"expires":"2099-01-02 15:04"`),
		classicUI(ids[2], "Jq", "/jq/", `,"use_extended_paths":true,"extended_paths":{"transform_jq":[{"path":"/x","method":"GET","filter":"."}]}`),
	}
	for i, b := range bodies {
		expect(t, "create "+ids[i], in.admin("POST", "/api/apis", b), 200, "")
	}
	return ids
}

func TestUIMigrationFlow(t *testing.T) {
	in := start(t, "")
	ids := seedUI(t, in)
	c := newUIClient(t, in.base)

	r := c.get("/ui/apis")
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/ui/login") {
		t.Fatalf("signed out: %d %s, want 303 to the sign-in page", r.status, r.header.Get("Location"))
	}
	wantPage(t, "wrong key", c.do("POST", "/ui/login", url.Values{"key": {"not-a-key"}}), http.StatusUnauthorized, "not valid")
	c.login(adminToken)
	r = c.get("/ui/apis")
	wantPage(t, "APIs", r, 200, "Orders &lt;script&gt;window.__xss=1&lt;/script&gt; &#34;q&#34; #shop", `href="/ui/migrate"`)
	if strings.Contains(r.body, "<script>window") {
		t.Fatal("an API name reached the page unescaped")
	}
	if got := r.header.Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'self'") {
		t.Fatalf("CSP %q", got)
	}
	wantPage(t, "search", c.get("/ui/apis?q=expiring"), 200, ids[1])
	if strings.Contains(c.get("/ui/apis?q=expiring").body, ids[0]) {
		t.Fatal("search by name listed an API that does not match")
	}
	wantPage(t, "category", c.get("/ui/apis?category=shop"), 200, ids[0])
	wantPage(t, "API view", c.get("/ui/apis/"+ids[0]), 200, "&#34;listen_path&#34;: &#34;/orders/&#34;", "listen_path: /orders/")

	tok := c.csrf()
	form := url.Values{"csrf_token": {tok}, "mode": {"dryRun"}, "apiIDs": ids[:]}
	r = c.do("POST", "/ui/migrate", form)
	wantPage(t, "dry run", r, 200, "2 migrated (nothing stored), 1 failed", expiryWarn, jqFailure, `class="ln chg"`)

	form.Set("mode", "direct")
	wantPage(t, "direct unconfirmed", c.do("POST", "/ui/migrate", form), 400, "Confirm the migration")
	form.Set("confirm", "yes")
	wantPage(t, "direct", c.do("POST", "/ui/migrate", form), 200, "2 migrated, 1 failed")
	r = c.get("/ui/apis?kind=oas")
	wantPage(t, "OAS APIs", r, 200, ids[0], ids[1])
	if strings.Contains(r.body, ids[2]) {
		t.Fatal("the failed API is listed as Tyk OAS")
	}

	// the migration is in the audit log as the REST call would be
	logs, _ := in.auditLogs("?action=" + url.QueryEscape("POST /api/apis/migrate"))
	if len(logs) == 0 {
		t.Fatal("the UI's migrations are not in the audit log")
	}
	wantPage(t, "audit page", c.get("/ui/audit?action="+url.QueryEscape("POST /api/apis/migrate")), 200, "POST /api/apis/migrate")

	wantPage(t, "sign out", c.do("POST", "/ui/logout", url.Values{"csrf_token": {tok}}), http.StatusSeeOther)
	if r := c.get("/ui/apis"); r.status != http.StatusSeeOther {
		t.Fatalf("after signing out: %d, want 303 to the sign-in page", r.status)
	}
}

// TestUIPermissions: an apis:read user sees no migrate button, and the
// service refuses the migration if the form is posted anyway (403, as
// REST), leaving the API classic.
func TestUIPermissions(t *testing.T) {
	in := start(t, "")
	ids := seedUI(t, in)
	_, key := in.createUser(`{"apis":"read"}`)
	c := newUIClient(t, in.base)
	c.login(key)
	r := c.get("/ui/apis")
	wantPage(t, "APIs", r, 200, ids[0])
	if strings.Contains(r.body, "/ui/migrate") || strings.Contains(r.body, "/ui/users") {
		t.Fatal("a read-only user is offered the migration or users")
	}
	form := url.Values{"csrf_token": {c.csrf()}, "mode": {"direct"}, "confirm": {"yes"}, "apiIDs": {ids[0]}}
	wantPage(t, "migrate as reader", c.do("POST", "/ui/migrate", form), 403, "access denied")
	wantPage(t, "users as reader", c.get("/ui/users"), 403, "access denied")
	wantPage(t, "still classic", c.get("/ui/apis?kind=classic"), 200, ids[0])
}

// TestUICSRF: a change without the session's token, with another's, or
// from another origin is refused and changes nothing.
func TestUICSRF(t *testing.T) {
	in := start(t, "")
	ids := seedUI(t, in)
	c := newUIClient(t, in.base)
	c.login(adminToken)
	other := newUIClient(t, in.base)
	other.login(adminToken)
	form := url.Values{"mode": {"direct"}, "confirm": {"yes"}, "apiIDs": {ids[0]}}
	wantPage(t, "no token", c.do("POST", "/ui/migrate", form), 403)
	form.Set("csrf_token", other.csrf())
	wantPage(t, "another session's token", c.do("POST", "/ui/migrate", form), 403)
	form.Set("csrf_token", c.csrf())
	wantPage(t, "other origin", c.do("POST", "/ui/migrate", form, "Origin", "http://evil.test"), 403)
	many := url.Values{"csrf_token": {c.csrf()}, "mode": {"dryRun"}}
	for i := range 1001 {
		many.Add("apiIDs", fmt.Sprintf("api-%d", i))
	}
	wantPage(t, "1,001 APIs", c.do("POST", "/ui/migrate", many), 400, "at most 1000 APIs")
	wantPage(t, "still classic", c.get("/ui/apis?kind=classic"), 200, ids[0])
	if r := c.do("POST", "/ui/migrate", form); r.status != 200 {
		t.Fatalf("with the token: %d: %s", r.status, r.body)
	}
}

// TestUIEscapes: API names and descriptions and policy names are text on
// every page, never markup.
func TestUIEscapes(t *testing.T) {
	in := start(t, "")
	seedUI(t, in)
	expect(t, "policy", in.admin("POST", "/api/portal/policies", `{"name":`+quote(xssPolicy)+`,"rate":10,"per":1,"quota_max":-1,"access_rights":{}}`), 200, "")
	c := newUIClient(t, in.base)
	c.login(adminToken)
	for _, path := range []string{"/ui/apis", "/ui/apis/ui-clean-api", "/ui/migrate", "/ui/policies"} {
		r := c.get(path)
		wantPage(t, path, r, 200)
		if strings.Contains(r.body, "<script>window") || strings.Contains(r.body, "<img src=x") || strings.Contains(r.body, "<svg") {
			t.Fatalf("%s: user text reached the page as markup", path)
		}
	}
	wantPage(t, "policies", c.get("/ui/policies"), 200, "&lt;img src=x onerror=window.__xss=2&gt;")
}

// TestUISessionExpiry: a session unused for 12 hours has ended; one used
// within them lives on.
func TestUISessionExpiry(t *testing.T) {
	in := start(t, "")
	c := newUIClient(t, in.base)
	c.login(adminToken)
	defer uiSkew.Store(0)
	uiSkew.Store(int64(11 * time.Hour))
	wantPage(t, "after 11 h", c.get("/ui/apis"), 200)
	uiSkew.Store(int64(23*time.Hour - time.Minute))
	wantPage(t, "11 h 59 min after the last use", c.get("/ui/apis"), 200)
	uiSkew.Store(int64(35 * time.Hour))
	if r := c.get("/ui/apis"); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/ui/login") {
		t.Fatalf("12 h idle: %d %s, want 303 to the sign-in page", r.status, r.header.Get("Location"))
	}
}

var newKeyRE = regexp.MustCompile(`id="new-key">([^<]+)<`)

// TestUIKeys: a key created from a policy is shown once and the gateway
// accepts it; the list names its hash only; revoking it makes the gateway
// refuse it. Without a gateway API the service's message is shown.
func TestUIKeys(t *testing.T) {
	gw := startKeyDouble(t)
	in := startKeys(t, gw.URL)
	api := "4b1e00000000000000000000000000ui"
	expect(t, "api", in.admin("POST", "/api/apis", classicBody(api, "Keyed")), 200, "")
	expect(t, "policy", in.admin("POST", "/api/portal/policies", `{"id":"gold","name":"Gold <i>tier</i>","rate":5,"per":1,"access_rights":{"`+api+`":{"api_id":"`+api+`","versions":["Default"]}}}`), 200, "")
	c := newUIClient(t, in.base)
	c.login(adminToken)
	wantPage(t, "keys", c.get("/ui/keys"), 200, `value="gold"`, "Gold &lt;i&gt;tier&lt;/i&gt;", "No keys issued.")
	tok := c.csrf()
	wantPage(t, "no policy", c.do("POST", "/ui/keys", url.Values{"csrf_token": {tok}, "alias": {"ana"}}), 400, "Choose at least one policy.")
	r := c.do("POST", "/ui/keys", url.Values{"csrf_token": {tok}, "alias": {"ana"}, "policies": {"gold"}})
	wantPage(t, "create", r, 200, "shown this once")
	m := newKeyRE.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("no key on the page: %s", r.body)
	}
	key := m[1]
	if !gw.Accepts(key, api) {
		t.Fatal("the gateway does not accept the key the UI showed")
	}
	r = c.get("/ui/keys")
	if strings.Contains(r.body, key) {
		t.Fatal("the keys list shows the key itself")
	}
	hashes := regexp.MustCompile(`action="/ui/keys/([^/]+)/revoke"`).FindAllStringSubmatch(r.body, -1)
	if len(hashes) != 1 {
		t.Fatalf("keys listed: %d, want 1: %s", len(hashes), r.body)
	}
	wantPage(t, "revoke", c.do("POST", "/ui/keys/"+hashes[0][1]+"/revoke", url.Values{"csrf_token": {tok}}), 200, "revoked", "No keys issued.")
	if gw.Accepts(key, api) {
		t.Fatal("the gateway still accepts a revoked key")
	}

	// a reader of keys sees no form and may not create one
	_, reader := in.createUser(`{"keys":"read","policy":"read"}`)
	rc := newUIClient(t, in.base)
	rc.login(reader)
	if r := rc.get("/ui/keys"); r.status != 200 || strings.Contains(r.body, `action="/ui/keys"`) {
		t.Fatalf("keys as a reader: %d, offered the create form: %v", r.status, strings.Contains(r.body, `action="/ui/keys"`))
	}
	wantPage(t, "create as reader", rc.do("POST", "/ui/keys", url.Values{"csrf_token": {rc.csrf()}, "policies": {"gold"}}), 403, "access denied")

	plain := start(t, "")
	expect(t, "policy", plain.admin("POST", "/api/portal/policies", `{"id":"gold","name":"Gold","rate":5,"per":1,"access_rights":{}}`), 200, "")
	pc := newUIClient(t, plain.base)
	pc.login(adminToken)
	wantPage(t, "no gateway API", pc.do("POST", "/ui/keys", url.Values{"csrf_token": {pc.csrf()}, "policies": {"gold"}}), 503, "key management needs --gateway-api-url")
}

// TestUIPoliciesAndUsers: the service's own validation messages on the
// policy form (which keeps what was typed), least privilege on the users
// form, a reset key shown once, the gateways page.
func TestUIPoliciesAndUsers(t *testing.T) {
	in := start(t, "")
	c := newUIClient(t, in.base)
	c.login(adminToken)
	tok := c.csrf()
	wantPage(t, "new policy", c.get("/ui/policies/new"), 200, `name="policy"`)
	r := c.do("POST", "/ui/policies", url.Values{"csrf_token": {tok}, "policy": {`{"name":"Broken",`}})
	wantPage(t, "malformed policy", r, 400, "The service refused the policy", "{&#34;name&#34;:&#34;Broken&#34;,")
	r = c.do("POST", "/ui/policies", url.Values{"csrf_token": {tok}, "policy": {`{"id":"silver","name":"Silver","rate":10,"per":1,"access_rights":{}}`}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("create policy: %d: %s", r.status, r.body)
	}
	r = c.get(r.header.Get("Location"))
	wantPage(t, "policy page", r, 200, "Silver", `&#34;id&#34;: &#34;silver&#34;`)
	id := regexp.MustCompile(`action="/ui/policies/([^"]+)"`).FindStringSubmatch(r.body)
	if id == nil {
		t.Fatalf("no edit form: %s", r.body)
	}
	r = c.do("POST", "/ui/policies/"+id[1], url.Values{"csrf_token": {tok}, "policy": {`{"_id":"zz","name":"Silver 2"}`}})
	wantPage(t, "bad edit", r, 400, "The service refused the policy", "Silver 2")
	wantPage(t, "policies", c.get("/ui/policies"), 200, "Silver")

	// a users:write manager holding apis:read may not grant apis:write
	_, mgr := in.createUser(`{"users":"write","apis":"read"}`)
	m := newUIClient(t, in.base)
	m.login(mgr)
	r = m.get("/ui/users")
	wantPage(t, "users as manager", r, 200, `name="perm_apis"`)
	if strings.Contains(r.body, `name="admin"`) || regexp.MustCompile(`(?s)name="perm_apis">.*?value="write"`).MatchString(strings.Split(r.body, `name="perm_policy"`)[0]) {
		t.Fatal("the manager is offered apis:write or admin")
	}
	mtok := m.csrf()
	wantPage(t, "grant more", m.do("POST", "/ui/users", url.Values{"csrf_token": {mtok}, "email_address": {"x@example.test"}, "perm_apis": {"write"}}),
		403, "cannot grant permissions you do not hold")
	r = m.do("POST", "/ui/users", url.Values{"csrf_token": {mtok}, "email_address": {"y@example.test"}, "first_name": {"<b>Y</b>"}, "perm_apis": {"read"}})
	wantPage(t, "create user", r, 200, "shown this once", "y@example.test", "&lt;b&gt;Y&lt;/b&gt;")
	key := newKeyRE.FindStringSubmatch(r.body)
	if key == nil {
		t.Fatal("no key shown")
	}
	if strings.Contains(m.get("/ui/users").body, key[1]) {
		t.Fatal("the key is shown again")
	}
	y := newUIClient(t, in.base)
	y.login(key[1])

	// an admin resets y's key: shown once, the old one signs in no more
	uid := regexp.MustCompile(`action="/ui/users/([^/]+)/reset" data-confirm="Give y@example.test`).FindStringSubmatch(c.get("/ui/users").body)
	if uid == nil {
		t.Fatal("no reset button for the new user")
	}
	r = c.do("POST", "/ui/users/"+uid[1]+"/reset", url.Values{"csrf_token": {tok}})
	wantPage(t, "reset", r, 200, "shown this once")
	if r := y.get("/ui/apis"); r.status != http.StatusSeeOther {
		t.Fatalf("a session on a reset key: %d, want 303 to the sign-in page", r.status)
	}
	wantPage(t, "old key", y.do("POST", "/ui/login", url.Values{"key": {key[1]}}), 401)
	y.login(newKeyRE.FindStringSubmatch(r.body)[1])

	wantPage(t, "gateways", c.get("/ui/gateways"), 200, "No gateway has registered.")
}

// TestUIPages: pages of 50 on the APIs and migration pages, the service's
// pages of 10 read five at a time.
func TestUIPages(t *testing.T) {
	db := filepath.Join(t.TempDir(), "management.db")
	ids := seedClassic(t, db, 61)
	in := start(t, db)
	c := newUIClient(t, in.base)
	c.login(adminToken)
	rows := regexp.MustCompile(`<tr>\s*<td><a href="/ui/apis/`)
	boxes := regexp.MustCompile(`name="apiIDs" value="`)
	for _, tt := range []struct {
		path string
		re   *regexp.Regexp
		n    int
		next bool
	}{
		{"/ui/apis", rows, 50, true},
		{"/ui/apis?p=2", rows, 11, false},
		{"/ui/apis?q=seeded&p=2", rows, 11, false},
		{"/ui/migrate", boxes, 50, true},
		{"/ui/migrate?p=2", boxes, 11, false},
	} {
		r := c.get(tt.path)
		wantPage(t, tt.path, r, 200)
		if n := len(tt.re.FindAllString(r.body, -1)); n != tt.n {
			t.Errorf("%s: %d APIs, want %d", tt.path, n, tt.n)
		}
		if next := strings.Contains(r.body, `rel="next"`); next != tt.next {
			t.Errorf("%s: next page link %v, want %v", tt.path, next, tt.next)
		}
	}
	if !strings.Contains(c.get("/ui/apis?p=2").body, ids[60]) {
		t.Error("page 2 lacks the last API")
	}
}

// TestUICategories: a Tyk OAS API's categories are changed on its page
// through UpdateAPICategories; a refusal shows the service's message.
func TestUICategories(t *testing.T) {
	in := start(t, "")
	expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc("cat-oas", "Cats", "/cats/")), 200, "")
	c := newUIClient(t, in.base)
	c.login(adminToken)
	tok := c.csrf()
	r := c.do("POST", "/ui/apis/cat-oas/categories", url.Values{"csrf_token": {tok}, "categories": {"shop, orders"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("save categories: %d: %s", r.status, r.body)
	}
	expect(t, "categories", in.admin("GET", "/api/apis/oas/cat-oas/categories", nil), 200, `{"categories":["shop","orders"]}`)
	wantPage(t, "filtered", c.get("/ui/apis?category=orders"), 200, "cat-oas")
	r = c.do("POST", "/ui/apis/cat-oas/categories", url.Values{"csrf_token": {tok}, "categories": {strings.Repeat("x", 2000)}})
	wantPage(t, "too long", r, 400, "The service refused the categories")
	expect(t, "unchanged", in.admin("GET", "/api/apis/oas/cat-oas/categories", nil), 200, `{"categories":["shop","orders"]}`)
}
