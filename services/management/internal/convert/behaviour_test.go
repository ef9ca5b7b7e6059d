package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// classicDef mirrors the contract suite's simple classic API.
func classicDef(id, name, listen string) map[string]any {
	return map[string]any{
		"api_id": id, "name": name, "active": true, "use_keyless": true, "org_id": "contract",
		"proxy": map[string]any{"listen_path": listen, "target_url": "http://upstream.test" + listen, "strip_listen_path": true},
		"version_data": map[string]any{"not_versioned": true, "default_version": "",
			"versions": map[string]any{"Default": map[string]any{"name": "Default", "use_extended_paths": true}}},
	}
}

func convertDef(t *testing.T, def any, opts Options) (*Result, error) {
	t.Helper()
	return Convert(mustMarshal(t, def), opts)
}

// lookupPath walks a decoded document.
func lookupPath(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{`{"api_id":"a"}`, ""},
		{`{"is_oas":true}`, SkipAlreadyMigrated},
		{`{"graphql":{"enabled":true}}`, SkipGraphQL},
		{`{"graphql":{"enabled":false},"protocol":"http"}`, ""},
		{`{"protocol":"tcp","listen_port":7000}`, SkipTCP},
		{`{"protocol":"tls"}`, SkipTCP},
	} {
		got, err := Classify([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("Classify(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if c.want != "" {
			if _, err := Convert([]byte(c.in), Options{}); err == nil {
				t.Errorf("Convert(%s) succeeded; an API Classify skips must not convert", c.in)
			}
		}
	}
	if _, err := Classify([]byte(`[1]`)); err == nil {
		t.Error("Classify([1]) gave no error")
	}
}

func TestContractDryRunShape(t *testing.T) {
	res, err := convertDef(t, classicDef("api-1", "Orders #shop #retail", "/orders/"), Options{DBID: "65f0c0ffee0123456789abcd"})
	if err != nil {
		t.Fatal(err)
	}
	if res.APIID != "api-1" || res.Name != "Orders #shop #retail" || !slices.Equal(res.Categories, []string{"shop", "retail"}) || len(res.Versions) != 0 {
		t.Fatalf("got %+v", res)
	}
	doc := decodeJSON(t, res.Base.JSON)
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"info", "title"}, "Orders #shop #retail"},
		{[]string{"info", "version"}, "Default"},
		{[]string{"x-tyk-api-gateway", "info", "id"}, "api-1"},
		{[]string{"x-tyk-api-gateway", "info", "dbId"}, "65f0c0ffee0123456789abcd"},
		{[]string{"x-tyk-api-gateway", "info", "orgId"}, "contract"},
		{[]string{"x-tyk-api-gateway", "info", "state", "active"}, true},
		{[]string{"x-tyk-api-gateway", "upstream", "url"}, "http://upstream.test/orders/"},
		{[]string{"x-tyk-api-gateway", "server", "listenPath", "value"}, "/orders/"},
		{[]string{"x-tyk-api-gateway", "server", "listenPath", "strip"}, true},
	} {
		if got := lookupPath(doc, c.path...); got != c.want {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
		}
	}
	if res.Base.ListenPath != "/orders/" || res.Base.APIID != "api-1" {
		t.Errorf("Document = %+v", res.Base)
	}
}

func TestVersionsAndChildIDs(t *testing.T) {
	def := classicDef("multi-1", "Multi", "/multi/")
	def["definition"] = map[string]any{"location": "header", "key": "x-api-version"}
	def["version_data"] = map[string]any{"not_versioned": false, "default_version": "v1", "versions": map[string]any{
		"v1": map[string]any{"name": "v1"}, "v2": map[string]any{"name": "v2"},
		"v3": map[string]any{"name": "v3", "override_target": "http://v3.upstream.test/"},
	}}
	res, err := convertDef(t, def, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Versions) != 2 {
		t.Fatalf("got %d versions, want 2", len(res.Versions))
	}
	base := decodeJSON(t, res.Base.JSON)
	want := fmt.Sprintf(`{"enabled":true,"name":"v1","default":"self","location":"header","key":"x-api-version","versions":[{"name":"v2","id":%q},{"name":"v3","id":%q}]}`,
		ChildID("multi-1", "v2"), ChildID("multi-1", "v3"))
	if got := string(mustMarshal(t, lookupPath(base, "x-tyk-api-gateway", "info", "versioning"))); got != string(mustMarshal(t, decodeJSON(t, []byte(want)))) {
		t.Errorf("versioning = %s, want %s", got, want)
	}
	for i, v := range []string{"v2", "v3"} {
		child := res.Versions[i]
		doc := decodeJSON(t, child.JSON)
		if child.APIID != ChildID("multi-1", v) || child.Name != "Multi-"+v || child.ListenPath != "/multi-"+v+"/" {
			t.Errorf("child %s = %+v", v, child)
		}
		if lookupPath(doc, "info", "version") != v || lookupPath(doc, "x-tyk-api-gateway", "info", "state", "internal") != true ||
			lookupPath(doc, "x-tyk-api-gateway", "info", "dbId") != nil {
			t.Errorf("child %s: %s", v, child.JSON)
		}
	}
	if got := lookupPath(decodeJSON(t, res.Versions[1].JSON), "x-tyk-api-gateway", "upstream", "url"); got != "http://v3.upstream.test/" {
		t.Errorf("v3 upstream = %v", got)
	}
	if id := ChildID("multi-1", "v2"); len(id) != 32 || id == ChildID("multi-2", "v2") || id != ChildID("multi-1", "v2") {
		t.Errorf("ChildID is not a deterministic 32-hex id per base and version: %s", id)
	}
}

func TestStagingRenamesEveryDocument(t *testing.T) {
	def := classicDef("shop-1", "Shop #retail", "/shop/")
	def["definition"] = map[string]any{"location": "url"}
	def["version_data"] = map[string]any{"not_versioned": false, "default_version": "v1", "versions": map[string]any{"v1": map[string]any{}, "v2": map[string]any{}}}
	direct, err := convertDef(t, def, Options{})
	if err != nil {
		t.Fatal(err)
	}
	staged, err := convertDef(t, def, Options{Staging: true})
	if err != nil {
		t.Fatal(err)
	}
	if staged.APIID != "staging-shop-1" || staged.Name != "[staged] Shop #retail" || staged.Base.ListenPath != "/tyk-staging/shop/" ||
		!slices.Equal(staged.Categories, []string{"retail"}) {
		t.Errorf("staged base = %+v", staged)
	}
	if v := staged.Versions[0]; v.APIID != "staging-"+direct.Versions[0].APIID || v.ListenPath != "/tyk-staging/shop-v2/" || v.Name != "[staged] Shop #retail-v2" {
		t.Errorf("staged child = %+v", v)
	}
	if !strings.Contains(string(staged.Base.JSON), `"id":"staging-`+direct.Versions[0].APIID+`"`) {
		t.Errorf("the staged base does not link the staged child: %s", staged.Base.JSON)
	}
}

// TestNoSilentLoss covers the contract's two probes and the settings Tyk drops.
func TestNoSilentLoss(t *testing.T) {
	withPaths := func(paths string) map[string]any {
		def := classicDef("loss-1", "Loss", "/loss/")
		var ep any
		if err := json.Unmarshal([]byte(paths), &ep); err != nil {
			t.Fatal(err)
		}
		def["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["extended_paths"] = ep
		return def
	}

	t.Run("allow list with method is converted", func(t *testing.T) {
		res, err := convertDef(t, withPaths(`{"white_list":[{"path":"/allowed","method":"GET","ignore_case":false,"disabled":false}]}`), Options{})
		if err != nil {
			t.Fatal(err)
		}
		doc := decodeJSON(t, res.Base.JSON)
		id, _ := lookupPath(doc, "paths", "/allowed", "get", "operationId").(string)
		if id == "" || lookupPath(doc, "x-tyk-api-gateway", "middleware", "operations", id, "allow", "enabled") != true {
			t.Fatalf("the allow list entry was dropped: %s", res.Base.JSON)
		}
	})

	for _, c := range []struct {
		name  string
		def   map[string]any
		words []string
	}{
		{"transform_jq", withPaths(`{"transform_jq":[{"path":"/jq","method":"POST","filter":".body"}]}`), []string{"transform_jq", "/jq"}},
		{"transform_jq_response", withPaths(`{"transform_jq_response":[{"path":"/jqr","method":"GET"}]}`), []string{"transform_jq_response", "/jqr"}},
		{"persist_graphql", withPaths(`{"persist_graphql":[{"path":"/q","method":"GET"}]}`), []string{"persist_graphql", "/q"}},
		{"allow entry without any method", withPaths(`{"white_list":[{"path":"/x"}]}`), []string{"white_list", "/x"}},
		{"unknown method", withPaths(`{"black_list":[{"path":"/x","method":"BREW"}]}`), []string{"black_list", "/x", "BREW"}},
		{"unknown method action", withPaths(`{"ignored":[{"path":"/x","method_actions":{"get":{"action":"teapot"}}}]}`), []string{"ignored", "/x", "teapot"}},
	} {
		t.Run(c.name, func(t *testing.T) { expectFailure(t, c.def, c.words...) })
	}

	api := func(mutate func(map[string]any)) map[string]any {
		def := classicDef("loss-2", "Loss", "/loss/")
		mutate(def)
		return def
	}
	for _, c := range []struct {
		name  string
		def   map[string]any
		words []string
	}{
		{"response_processors", api(func(d map[string]any) {
			d["response_processors"] = []any{map[string]any{"name": "header_transform", "options": map[string]any{"x": 1}}}
		}), []string{"response_processors", "header_transform"}},
		{"auth_provider", api(func(d map[string]any) { d["auth_provider"] = map[string]any{"name": "ldap"} }), []string{"auth_provider"}},
		{"session_provider", api(func(d map[string]any) { d["session_provider"] = map[string]any{"storage_engine": "x"} }), []string{"session_provider"}},
		{"enable_proxy_protocol", api(func(d map[string]any) { d["enable_proxy_protocol"] = true }), []string{"enable_proxy_protocol"}},
		{"json_rpc_version", api(func(d map[string]any) { d["json_rpc_version"] = "2.0" }), []string{"json_rpc_version"}},
		{"traffic_logs", api(func(d map[string]any) {
			d["custom_middleware"] = map[string]any{"traffic_logs": []any{map[string]any{"name": "x"}}}
		}), []string{"custom_middleware.traffic_logs"}},
		{"cp_dynamic_handler", api(func(d map[string]any) {
			d["event_handlers"] = map[string]any{"events": map[string]any{"HostDown": []any{map[string]any{"handler_name": "cp_dynamic_handler"}}}}
		}), []string{"event_handlers", "cp_dynamic_handler"}},
		{"legacy paths", api(func(d map[string]any) {
			d["version_data"] = map[string]any{"not_versioned": true, "versions": map[string]any{"Default": map[string]any{"paths": map[string]any{"black_list": []any{"/secret"}}}}}
		}), []string{"paths.black_list", "/secret"}},
		{"fractional rate limit", api(func(d map[string]any) { d["global_rate_limit"] = map[string]any{"rate": 1.5, "per": 1} }), []string{"global_rate_limit"}},
		{"security_requirements", api(func(d map[string]any) { d["security_requirements"] = []any{[]any{"jwt"}} }), []string{"security_requirements"}},
		{"pinned domain without keys", api(func(d map[string]any) {
			d["pinned_public_keys"] = map[string]any{"api.example.com": " , "}
		}), []string{"pinned_public_keys", "api.example.com"}},
		{"jwt_jwks_uris", api(func(d map[string]any) {
			d["jwt_jwks_uris"] = []any{map[string]any{"url": "https://idp.test/jwks.json"}}
		}), []string{"jwt_jwks_uris"}},
		{"global_enforce_timeout", api(func(d map[string]any) {
			d["version_data"] = map[string]any{"not_versioned": true, "versions": map[string]any{"Default": map[string]any{"global_enforce_timeout": 30}}}
		}), []string{"global_enforce_timeout", "Default"}},
		{"ip list switched off beside one switched on", api(func(d map[string]any) {
			// with ip_access_control_disabled false (or absent) the gateway applies both lists
			d["enable_ip_whitelisting"], d["allowed_ips"], d["blacklisted_ips"] = true, []any{"10.0.0.1"}, []any{"10.0.0.2"}
			d["ip_access_control_disabled"] = true
		}), []string{"blacklisted_ips"}},
	} {
		t.Run(c.name, func(t *testing.T) { expectFailure(t, c.def, c.words...) })
	}
}

func expectFailure(t *testing.T, def map[string]any, words ...string) {
	t.Helper()
	res, err := convertDef(t, def, Options{})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("want a Failure naming %q, got %v (result %v)", words, err, res)
	}
	all := strings.Join(f.Messages, " | ")
	for _, w := range words {
		if !strings.Contains(all, w) {
			t.Errorf("the failure does not name %q: %s", w, all)
		}
	}
	if !strings.HasPrefix(f.Error(), "classic API cannot be migrated: ") {
		t.Errorf("Error() = %q", f.Error())
	}
}

// TestNeverMoreOpen checks that authentication survives the conversion.
func TestNeverMoreOpen(t *testing.T) {
	t.Run("implicit auth token", func(t *testing.T) {
		def := classicDef("closed-1", "Closed", "/closed/")
		def["use_keyless"] = false
		res, err := convertDef(t, def, Options{})
		if err != nil {
			t.Fatal(err)
		}
		doc := decodeJSON(t, res.Base.JSON)
		if lookupPath(doc, "x-tyk-api-gateway", "server", "authentication", "enabled") != true ||
			lookupPath(doc, "x-tyk-api-gateway", "server", "authentication", "securitySchemes", "authToken", "enabled") != true ||
			lookupPath(doc, "components", "securitySchemes", "authToken", "type") != "apiKey" {
			t.Fatalf("a keyed API lost its auth token: %s", res.Base.JSON)
		}
	})
	t.Run("disabled mock keeps authentication", func(t *testing.T) {
		def := classicDef("closed-2", "Closed", "/closed/")
		def["use_keyless"], def["use_standard_auth"] = false, true
		def["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["extended_paths"] = map[string]any{
			"white_list": []any{map[string]any{"path": "/m", "disabled": true, "method_actions": map[string]any{"GET": map[string]any{"action": "reply", "code": 200}}}},
		}
		res, err := convertDef(t, def, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := lookupPath(decodeJSON(t, res.Base.JSON), "x-tyk-api-gateway", "middleware", "operations", "mGET", "ignoreAuthentication", "enabled"); got != false {
			t.Fatalf("ignoreAuthentication.enabled = %v for a disabled mock on a keyed API, want false", got)
		}
	})
	t.Run("all token sources disabled", func(t *testing.T) {
		def := classicDef("closed-3", "Closed", "/closed/")
		def["use_keyless"], def["use_standard_auth"] = false, true
		def["auth_configs"] = map[string]any{"authToken": map[string]any{"disable_header": true}}
		expectFailure(t, def, "auth_configs.authToken")
	})
}

func TestDecodeFromDB(t *testing.T) {
	res, err := Convert(mustReadFile(t, filepath.Join("testdata", "versioned-db-encoded.json")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Versions[0].Name != "DB encoded-v2" {
		t.Errorf("version keys were not decoded: %+v", res.Versions[0])
	}
	if !strings.Contains(string(res.Base.JSON), `"required":["name"]`) {
		t.Errorf("schema_b64 was not decoded: %s", res.Base.JSON)
	}
	// A verbatim definition whose keys happen to be valid base64 keeps them.
	def := classicDef("plain-1", "Plain", "/plain/")
	def["definition"] = map[string]any{"location": "header", "key": "v"}
	def["version_data"] = map[string]any{"not_versioned": false, "default_version": "beta", "versions": map[string]any{"beta": map[string]any{}, "test": map[string]any{}}}
	res, err = convertDef(t, def, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Versions) != 1 || res.Versions[0].Name != "Plain-test" {
		t.Errorf("plain version keys were decoded: %+v", res.Versions)
	}
}

func TestReadableDuration(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{{0, "0s"}, {200, "200ns"}, {20000, "20µs"}, {2000000, "2ms"}, {2000000000, "2s"}, {5400e9, "1h30m"}, {1500000000, "1s500ms"}} {
		if got := readableDuration(timeDuration(c.ns)); got != c.want {
			t.Errorf("readableDuration(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}

// TestValidatorsCatchBrokenDocuments makes sure the checks used by the other tests are not vacuous.
func TestValidatorsCatchBrokenDocuments(t *testing.T) {
	res, err := convertDef(t, classicDef("v-1", "Valid", "/valid/"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to string }{
		{`"listenPath":{"value":"/valid/"`, `"listenPath":{"value":""`},
		{`"state":{"active":true}`, `"state":{"active":"yes"}`},
		{`"title":"Valid"`, `"title":""`},
		{`"state":{"active":true}`, `"state":{}`},
		{`"listenPath":{"value":"/valid/","strip":true}`, `"listenPath":{"value":"/valid/","strip":"yes"}`},
		{`"server":{`, `"server":{"protocol":"ftp",`},
		{`"server":{`, `"server":{"port":0,`},
		{`"upstream":{"url":"http://upstream.test/valid/"`, `"upstream":{"rateLimit":{"enabled":true,"rate":1,"per":"1 minute"},"url":"x"`},
		{`"paths":{}`, `"paths":{"nope":{}}`},
		{`"paths":{}`, `"paths":{"/a/{id}":{"get":{"operationId":"x","responses":{"default":{"description":""}}}}}`},
		{`"paths":{}`, `"paths":{"/a":{"get":{"operationId":"x","responses":{}}}}`},
	} {
		broken := strings.Replace(string(res.Base.JSON), c.from, c.to, 1)
		if broken == string(res.Base.JSON) {
			t.Fatalf("%s not found in %s", c.from, res.Base.JSON)
		}
		if len(documentProblems(t, []byte(broken))) == 0 {
			t.Errorf("replacing %s with %s went unnoticed", c.from, c.to)
		}
	}
	d := &oasDocument{OpenAPI: "3.0.6", Paths: map[string]*pathItem{"/a/{id}": {Get: &operation{OperationID: "x"}}}}
	if p := validateDocument(d); len(p) < 4 {
		t.Errorf("validateDocument found only %q in a broken document", p)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNewerSettingsSwitchedOffAreInert: the settings refused when in use convert when they are switched off
// or empty, since then they configure nothing.
func TestNewerSettingsSwitchedOffAreInert(t *testing.T) {
	for name, mutate := range map[string]func(map[string]any){
		"error_overrides_disabled": func(d map[string]any) {
			d["error_overrides"] = map[string]any{"403": []any{}}
			d["error_overrides_disabled"] = true
		},
		"empty jwt_jwks_uris": func(d map[string]any) { d["jwt_jwks_uris"] = []any{} },
		"global_enforce_timeout_disabled": func(d map[string]any) {
			d["version_data"] = map[string]any{"not_versioned": true, "versions": map[string]any{"Default": map[string]any{
				"global_enforce_timeout": 30, "global_enforce_timeout_disabled": true}}}
		},
	} {
		def := classicDef("inert-1", "Inert", "/inert/")
		mutate(def)
		if _, err := convertDef(t, def, Options{}); err != nil {
			t.Errorf("%s: %v, want a conversion", name, err)
		}
	}
}
