package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
	"github.com/gatehouse/gatehouse/pkg/tykgwtest"
	"github.com/gatehouse/gatehouse/services/management/internal/keys"
)

const gatewaySecret = "gateway-api-secret-0123456789"

// startKeys runs the service with the gateway API at url.
func startKeys(t testing.TB, url string) *instance {
	t.Helper()
	db := t.TempDir() + "/management.db"
	in := servertest.Start(t, Serve, db, adminToken, func(c *config.Config) {
		c.Gateways = config.Gateways{APIURL: url, APISecret: gatewaySecret}
	})
	return &instance{t: t, db: db, base: in.Base, conn: in.Conn, stop: in.Stop}
}

// startKeyDouble runs the gateway double's key API.
func startKeyDouble(t testing.TB) *tykgwtest.KeyAPI {
	t.Helper()
	gw, err := tykgwtest.StartKeyAPI(gatewaySecret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	return gw
}

// keyData reads the Dashboard's KeyData answer.
type keyData struct {
	APIModel map[string]any `json:"api_model"`
	KeyID    string         `json:"key_id"`
	KeyHash  string         `json:"key_hash"`
	Data     map[string]any `json:"data"`
}

func readKey(t *testing.T, r resp) keyData {
	t.Helper()
	var k keyData
	if err := json.Unmarshal(r.body, &k); err != nil || k.APIModel == nil || k.Data == nil {
		t.Fatalf("not a KeyData: %v %s", err, r.body)
	}
	return k
}

// keyList reads {"data":{"keys":[..]},"pages":n}.
func keyList(t *testing.T, r resp) ([]string, int) {
	t.Helper()
	var v struct {
		Data struct {
			Keys []string `json:"keys"`
		} `json:"data"`
		Pages *int `json:"pages"`
	}
	if err := json.Unmarshal(r.body, &v); err != nil || v.Data.Keys == nil || v.Pages == nil {
		t.Fatalf("not a key list: %v %s", err, r.body)
	}
	return v.Data.Keys, *v.Pages
}

func TestKeysNeedTheGatewayAPI(t *testing.T) {
	in := start(t, "")
	want := mgmtErr("key management needs --gateway-api-url")
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/keys", `{"apply_policies":["x"]}`}, {"POST", "/api/keys/mine", `{}`}, {"GET", "/api/keys/abc", ""},
		{"PUT", "/api/keys/abc", `{}`}, {"DELETE", "/api/keys/abc", ""}, {"GET", "/api/apis/keys", ""},
		{"GET", "/api/keys/detailed", ""}, {"GET", "/api/apis/a1/keys", ""}, {"GET", "/api/apis/a1/keys/search?q=x", ""},
		{"GET", "/api/apis/a1/keys/abc", ""}, {"PUT", "/api/apis/a1/keys/abc", `{}`}, {"DELETE", "/api/apis/a1/keys/abc", ""},
		{"POST", "/api/keys/preview", `{}`},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		expect(t, c.method+" "+c.path, in.admin(c.method, c.path, body), 503, want)
	}
}

// TestKeysThroughTheGateway restates the dashboard SDK's KeysAPI requests
// (paths, query names, bodies) against the gateway double: a key issued
// through management is held by the gateway, listed by its hash, updated,
// refused by validation, and gone after its deletion; the key itself is
// answered once and recorded nowhere.
func TestKeysThroughTheGateway(t *testing.T) {
	gw := startKeyDouble(t)
	in := startKeys(t, gw.URL)
	org := in.orgID()
	api := "4b1e0000000000000000000000000001"
	expect(t, "api", in.admin("POST", "/api/apis", classicBody(api, "Keyed")), 200, "")
	expect(t, "policy", in.admin("POST", "/api/portal/policies", `{"id":"gold","name":"Gold","rate":5,"per":1,"access_rights":{"`+api+`":{"api_id":"`+api+`","versions":["Default"]}}}`), 200, "")

	// AddKey: POST /api/keys with a SessionState
	session := `{"alias":"ana@example.test","rate":10,"per":1,"quota_max":-1,"expires":0,"meta_data":{"team":"a"},"tags":["t1"],` +
		`"access_rights":{"` + api + `":{"api_id":"` + api + `","api_name":"Keyed","versions":["Default"],"allowed_urls":[],"limit":{"rate":10,"per":1}}}}`
	r := in.admin("POST", "/api/keys", session)
	expect(t, "create", r, 200, "")
	created := readKey(t, r)
	key, hash := created.KeyID, created.KeyHash
	if key == "" || hash == "" || key == hash || tykgwtest.KeyHash(key) != hash || created.Data["alias"] != "ana@example.test" || created.Data["org_id"] != org {
		t.Fatalf("create answered %s", r.body)
	}
	held, ok := gw.Session(hash)
	if !ok || !strings.Contains(string(held), `"org_id":"`+org+`"`) || !strings.Contains(string(held), `"meta_data":{"team":"a"}`) {
		t.Fatalf("the gateway holds %s (%v)", held, ok)
	}

	// GetKeyDetail: by the key, and by the hash with ?hashed=1
	for _, path := range []string{"/api/keys/" + key, "/api/keys/" + hash + "?hashed=1", "/api/keys/" + hash, "/api/apis/" + api + "/keys/" + hash + "?hashed=1&auto_guess=false"} {
		r = in.admin("GET", path, nil)
		expect(t, "get "+path, r, 200, "")
		if got := readKey(t, r); got.KeyID != hash || got.KeyHash != hash || got.Data["alias"] != "ana@example.test" || strings.Contains(string(r.body), key) {
			t.Fatalf("get %s: %s", path, r.body)
		}
	}
	expect(t, "get a key under another API", in.admin("GET", "/api/apis/nope/keys/"+hash, nil), 404, mgmtErr("API not found"))
	expect(t, "get a key management never issued", in.admin("GET", "/api/keys/ffffffff", nil), 404, mgmtErr("Key not found"))

	// ListKeys, ListApiKeys, SearchKeys, GetKeysDetailed
	keys, pages := keyList(t, in.admin("GET", "/api/apis/keys?p=1", nil))
	if len(keys) != 1 || keys[0] != hash || pages != 1 {
		t.Fatalf("list: %v %d", keys, pages)
	}
	keys, _ = keyList(t, in.admin("GET", "/api/apis/"+api+"/keys?p=1", nil))
	if len(keys) != 1 || keys[0] != hash {
		t.Fatalf("API keys: %v", keys)
	}
	keys, _ = keyList(t, in.admin("GET", "/api/apis/"+api+"/keys/search?q=ana&p=1", nil))
	if len(keys) != 1 {
		t.Fatalf("search ana: %v", keys)
	}
	keys, _ = keyList(t, in.admin("GET", "/api/apis/"+api+"/keys/search?q=zzz", nil))
	if len(keys) != 0 {
		t.Fatalf("search zzz: %v", keys)
	}
	r = in.admin("GET", "/api/keys/detailed?q=ana", nil)
	var detailed struct {
		Keys  []keyData `json:"keys"`
		Pages int       `json:"pages"`
	}
	if json.Unmarshal(r.body, &detailed) != nil || len(detailed.Keys) != 1 || detailed.Keys[0].KeyHash != hash || detailed.Keys[0].Data["alias"] != "ana@example.test" || detailed.Pages != 1 {
		t.Fatalf("detailed: %d %s", r.status, r.body)
	}

	// the API is in use: 409 naming the count, unless ?force=true
	expect(t, "delete a used API", in.admin("DELETE", "/api/apis/"+api, nil), 409, mgmtErr("1 issued keys use this API: delete or update them first, or add ?force=true"))

	// UpdateKeyDetail: to the policy
	r = in.admin("PUT", "/api/keys/"+hash+"?hashed=1&suppress_reset=1", `{"alias":"ana@example.test","apply_policies":["gold"]}`)
	expect(t, "update", r, 200, "")
	if held, _ := gw.Session(hash); !strings.Contains(string(held), `"apply_policies":["gold"]`) {
		t.Fatalf("after the update the gateway holds %s", held)
	}
	if calls := gw.Calls(); !strings.Contains(calls[len(calls)-1], "hashed=true") || !strings.Contains(calls[len(calls)-1], "suppress_reset=1") {
		t.Fatalf("the update called %v", calls)
	}
	expect(t, "delete a used policy", in.admin("DELETE", "/api/portal/policies/gold", nil), 409, mgmtErr("1 issued keys use this policy: delete or update them first, or add ?force=true"))
	expect(t, "delete an API a key reaches through its policy", in.admin("DELETE", "/api/apis/"+api, nil), 409, mgmtErr("1 issued keys use this API: delete or update them first, or add ?force=true"))
	keys, _ = keyList(t, in.admin("GET", "/api/apis/"+api+"/keys", nil))
	if len(keys) != 1 {
		t.Fatalf("API keys through the policy: %v", keys)
	}

	// bad sessions: 400 naming the fault, nothing sent to the gateway
	before := len(gw.Calls())
	for _, c := range []struct{ body, msg string }{
		{`{"access_rights":{"nope":{"api_id":"nope"}}}`, `access_rights: API "nope" does not exist`},
		{`{"apply_policies":["silver"]}`, `apply_policies: policy "silver" does not exist`},
		{`{"alias":"x"}`, "the session grants no access: give access_rights or apply_policies"},
		{`{"apply_policies":["gold"],"rate":"10"}`, "rate: must be a number, not a string"},
		{`{"apply_policies":["gold"],"expires":1.5}`, "expires: must be a whole number"},
		{`{"apply_policies":["gold"],"access_rights":{"` + api + `":{"versions":"Default"}}}`, "access_rights." + api + ".versions: must be an array, not a string"},
		{`[1]`, "must be an object, not an array"},
	} {
		r := in.admin("POST", "/api/keys", c.body)
		if r.status != 400 || !strings.Contains(message(r), c.msg) {
			t.Errorf("POST %s: %d %s, want 400 with %q", c.body, r.status, r.body, c.msg)
		}
	}
	expect(t, "preview", in.admin("POST", "/api/keys/preview", `{"apply_policies":["gold"]}`), 200, "")
	if n := len(gw.Calls()); n != before {
		t.Fatalf("refused and previewed sessions reached the gateway: %v", gw.Calls()[before:])
	}

	// a custom key, then the same again: 409
	r = in.admin("POST", "/api/keys/my-custom-key", `{"apply_policies":["gold"]}`)
	expect(t, "custom", r, 200, "")
	custom := readKey(t, r)
	if !strings.HasSuffix(custom.KeyID, "my-custom-key") || custom.KeyHash != tykgwtest.KeyHash(custom.KeyID) {
		t.Fatalf("custom: %s", r.body)
	}
	expect(t, "custom again", in.admin("POST", "/api/keys/my-custom-key", `{"apply_policies":["gold"]}`), 409, mgmtErr("Key already exists"))

	// the gateway unreachable: 503, nothing recorded
	gw.Down(true)
	r = in.admin("POST", "/api/keys", `{"apply_policies":["gold"]}`)
	if r.status != 503 {
		t.Fatalf("create with the gateway down: %d %s", r.status, r.body)
	}
	expect(t, "delete with the gateway down", in.admin("DELETE", "/api/keys/"+hash, nil), 503, "")
	gw.Down(false)
	if keys, _ := keyList(t, in.admin("GET", "/api/apis/keys?p=0", nil)); len(keys) != 2 {
		t.Fatalf("after the gateway was down: %v", keys)
	}

	// DeleteKey by the key: gone from the gateway and from the lists
	expect(t, "delete", in.admin("DELETE", "/api/keys/"+key, nil), 200, `{"Status":"OK","Message":"Key deleted","Meta":null}`)
	if _, ok := gw.Session(hash); ok {
		t.Fatal("the gateway still holds the deleted key")
	}
	expect(t, "get deleted", in.admin("GET", "/api/keys/"+hash, nil), 404, mgmtErr("Key not found"))
	expect(t, "delete custom under its API", in.admin("DELETE", "/api/apis/"+api+"/keys/"+custom.KeyHash+"?hashed=1", nil), 200, "")
	if keys, _ := keyList(t, in.admin("GET", "/api/apis/keys", nil)); len(keys) != 0 || gw.Len() != 0 {
		t.Fatalf("after deleting both: %v, gateway holds %d", keys, gw.Len())
	}
	expect(t, "policy free again", in.admin("DELETE", "/api/portal/policies/gold", nil), 200, "")

	// the audit log names hashes, never a key
	r = in.admin("GET", "/api/audit-logs?p=0", nil)
	for _, k := range []string{key, custom.KeyID, "my-custom-key"} {
		if strings.Contains(string(r.body), k) {
			t.Fatalf("the audit log holds a key: %s", r.body)
		}
	}
	if !strings.Contains(string(r.body), `"object_id":"`+hash+`"`) || !strings.Contains(string(r.body), `"action":"POST /api/keys"`) {
		t.Fatalf("the audit log does not name the key's hash: %s", r.body)
	}
}

// TestKeysForceDelete: ?force=true deletes an API that keys use.
func TestKeysForceDelete(t *testing.T) {
	gw := startKeyDouble(t)
	in := startKeys(t, gw.URL)
	api := "4b1e0000000000000000000000000002"
	expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc(api, "Forced", "/forced/")), 200, "")
	expect(t, "key", in.admin("POST", "/api/keys", fmt.Sprintf(`{"access_rights":{%q:{"api_id":%q}}}`, api, api)), 200, "")
	expect(t, "delete used OAS API", in.admin("DELETE", "/api/apis/oas/"+api, nil), 409, "")
	expect(t, "force", in.admin("DELETE", "/api/apis/oas/"+api+"?force=true", nil), 200, "")
	expect(t, "API keys of a deleted API", in.admin("GET", "/api/apis/"+api+"/keys", nil), 404, mgmtErr("API not found"))
}

// TestKeysNeverInA403: a caller lacking the keys permission is refused
// with the path the contract's 403 names, the key in it replaced by its
// hash (the name the audit log records): the key is never in the body.
func TestKeysNeverInA403(t *testing.T) {
	gw := startKeyDouble(t)
	in := startKeys(t, gw.URL)
	api := "4b1e0000000000000000000000000003"
	expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc(api, "Hidden", "/hidden/")), 200, "")
	k := readKey(t, in.admin("POST", "/api/keys", fmt.Sprintf(`{"access_rights":{%q:{"api_id":%q}}}`, api, api)))
	_, reader := in.createUser(`{"apis":"read"}`)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/keys/" + k.KeyID},
		{"PUT", "/api/keys/" + k.KeyID},
		{"DELETE", "/api/keys/" + k.KeyID},
		{"POST", "/api/keys/custom-key-0123456789"},
		{"GET", "/api/apis/" + api + "/keys/" + k.KeyID},
		{"DELETE", "/api/apis/" + api + "/keys/" + k.KeyID},
	} {
		r := in.do(c.method, c.path, reader, []byte(`{}`))
		name, hash := k.KeyID, k.KeyHash // the hash create answered
		if strings.Contains(c.path, "custom-key") {
			name, hash = "custom-key-0123456789", keys.ObjectID("custom-key-0123456789")
		}
		hashed := strings.TrimSuffix(c.path, name) + hash
		expect(t, c.method+" "+c.path+" without the keys permission", r, 403, mgmtErr("access denied: You do not have permission to access "+hashed))
		if strings.Contains(string(r.body), name) {
			t.Errorf("%s %s: the 403 body holds the key: %s", c.method, c.path, r.body)
		}
	}
}

// TestKeyAndAPIDeleteRace: a key issued while its API is deleted (without
// force) never ends with both answered 200: the delete checks for keys in
// its own transaction, and the key's record is written only if its API
// still exists (the key is then deleted from the gateway again).
func TestKeyAndAPIDeleteRace(t *testing.T) {
	gw := startKeyDouble(t)
	in := startKeys(t, gw.URL)
	for i := range 40 {
		api := fmt.Sprintf("4b1e00000000000000000000000001%02d", i)
		expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc(api, "Race", fmt.Sprintf("/race-%d/", i))), 200, "")
		var key, del resp
		var wg sync.WaitGroup
		wg.Go(func() {
			key = in.admin("POST", "/api/keys", fmt.Sprintf(`{"access_rights":{%q:{"api_id":%q}}}`, api, api))
		})
		wg.Go(func() { del = in.admin("DELETE", "/api/apis/oas/"+api, nil) })
		wg.Wait()
		switch {
		case key.status == 200 && del.status == 200:
			t.Fatalf("round %d: the key was issued and its API deleted without force: %s / %s", i, key.body, del.body)
		case key.status == 200 && del.status != 409, key.status != 200 && key.status != 400:
			t.Fatalf("round %d: key %d %s, delete %d %s", i, key.status, key.body, del.status, del.body)
		case key.status == 400 && gw.Len() != 0:
			t.Fatalf("round %d: a refused key is left on the gateway (%d sessions)", i, gw.Len())
		}
		if key.status == 200 {
			expect(t, "force", in.admin("DELETE", "/api/apis/oas/"+api+"?force=true", nil), 200, "")
			k := readKey(t, key)
			expect(t, "delete the key", in.admin("DELETE", "/api/keys/"+k.KeyHash+"?hashed=true", nil), 200, "")
		}
	}
}

// TestKeyUpdateAndAPIDeleteRace: a key updated to grant an API while that
// API is deleted (without force) never ends with both answered 200, and an
// update refused because its API went away leaves the gateway's session as
// it was. An update the gateway does not take puts the record back.
func TestKeyUpdateAndAPIDeleteRace(t *testing.T) {
	gw := startKeyDouble(t)
	in := startKeys(t, gw.URL)
	const base = "4b1e0000000000000000000000000200"
	expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc(base, "Base", "/update-race-base/")), 200, "")
	k := readKey(t, in.admin("POST", "/api/keys", fmt.Sprintf(`{"access_rights":{%q:{"api_id":%q}}}`, base, base)))
	for i := range 40 {
		api := fmt.Sprintf("4b1e00000000000000000000000002%02d", i+1)
		expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc(api, "Race", fmt.Sprintf("/update-race-%d/", i))), 200, "")
		var put, del resp
		var wg sync.WaitGroup
		wg.Go(func() {
			put = in.admin("PUT", "/api/keys/"+k.KeyHash+"?hashed=true",
				fmt.Sprintf(`{"access_rights":{%q:{"api_id":%q},%q:{"api_id":%q}}}`, base, base, api, api))
		})
		wg.Go(func() { del = in.admin("DELETE", "/api/apis/oas/"+api, nil) })
		wg.Wait()
		session, _ := gw.Session(k.KeyHash)
		switch {
		case put.status == 200 && del.status == 200:
			t.Fatalf("round %d: the key was given the API and the API deleted without force: %s / %s", i, put.body, del.body)
		case put.status == 200 && del.status != 409, put.status != 200 && put.status != 400:
			t.Fatalf("round %d: update %d %s, delete %d %s", i, put.status, put.body, del.status, del.body)
		case put.status == 400 && strings.Contains(string(session), api):
			t.Fatalf("round %d: a refused update reached the gateway: %s", i, session)
		}
		if put.status == 200 {
			expect(t, "force", in.admin("DELETE", "/api/apis/oas/"+api+"?force=true", nil), 200, "")
		}
		// back to the base API alone for the next round
		expect(t, "reset", in.admin("PUT", "/api/keys/"+k.KeyHash+"?hashed=true",
			fmt.Sprintf(`{"access_rights":{%q:{"api_id":%q}}}`, base, base)), 200, "")
	}

	const other = "4b1e0000000000000000000000000299"
	expect(t, "oas api", in.admin("POST", "/api/apis/oas", oasDoc(other, "Other", "/update-race-other/")), 200, "")
	gw.Close()
	r := in.admin("PUT", "/api/keys/"+k.KeyHash+"?hashed=true",
		fmt.Sprintf(`{"access_rights":{%q:{"api_id":%q},%q:{"api_id":%q}}}`, base, base, other, other))
	if r.status != 503 {
		t.Fatalf("update with the gateway down: %d %s, want 503", r.status, r.body)
	}
	if hashes, _ := keyList(t, in.admin("GET", "/api/apis/"+other+"/keys", nil)); len(hashes) != 0 {
		t.Fatalf("the record of an update the gateway did not take was kept: the key is listed for %s: %v", other, hashes)
	}
	if hashes, _ := keyList(t, in.admin("GET", "/api/apis/"+base+"/keys", nil)); len(hashes) != 1 {
		t.Fatalf("the key's record is not back: keys of %s: %v", base, hashes)
	}
	// the audit log records the update with the status it answered
	logs, _ := in.auditLogs("?p=1")
	if len(logs) == 0 || logs[0].ObjectID != k.KeyHash || logs[0].Status != 503 {
		t.Fatalf("the newest audit entry is not the refused update (503 on %s): %+v", k.KeyHash, logs[:min(len(logs), 1)])
	}
	accepted := 0
	for _, e := range logs[1:] {
		if e.Action == "PUT /api/keys/{key_id}" && e.ObjectID == k.KeyHash && e.Status == 200 {
			accepted++
		}
	}
	if accepted == 0 {
		t.Fatalf("no accepted update of %s is in the audit log's first page: %+v", k.KeyHash, logs)
	}
}
