package convert

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Credential sources: a migrated API must read credentials from exactly the places the classic API read them.
// The facts restated here, from Tyk's apidef/oas loader (ExtractTo) and the gateway's getAuthToken:
//   - the loader starts every method's auth config with the header disabled; a header source that is absent
//     from the document leaves it disabled, a present one sets disable_header = !enabled and the name;
//   - absent query and cookie sources leave use_param and use_cookie off; present ones set flag and name;
//   - for the auth token, the OpenAPI apiKey scheme then switches its own place on with its name;
//   - a custom plugin auth config that ends up as just {disable_header: true} is not stored at all;
//   - the gateway reads the header when it is not disabled (name default "Authorization"), the query
//     parameter when use_param is set and the cookie when use_cookie is set; their names default to the
//     header's name when the header is enabled and named, else to "Authorization".

// readSources is where the gateway reads a credential from under one auth config: "" when a place is off.
type readSources struct{ Header, Query, Cookie string }

func gatewaySources(ac authConfig) readSources {
	var r readSources
	fallback := "Authorization"
	if !ac.DisableHeader {
		r.Header = orDefault(ac.AuthHeaderName, "Authorization")
		fallback = r.Header
	}
	if ac.UseParam {
		r.Query = orDefault(ac.ParamName, fallback)
	}
	if ac.UseCookie {
		r.Cookie = orDefault(ac.CookieName, fallback)
	}
	return r
}

// loadSources reads one x-tyk source object into ac, as AuthSources.ExtractTo does.
func loadSources(obj map[string]any, ac *authConfig) {
	source := func(key string) (map[string]any, bool) {
		m, ok := obj[key].(map[string]any)
		return m, ok
	}
	name := func(m map[string]any) string { s, _ := m["name"].(string); return s }
	if h, ok := source("header"); ok {
		ac.DisableHeader = h["enabled"] != true
		ac.AuthHeaderName = name(h)
	} else {
		ac.DisableHeader = true
	}
	if q, ok := source("query"); ok {
		ac.UseParam, ac.ParamName = q["enabled"] == true, name(q)
	}
	if c, ok := source("cookie"); ok {
		ac.UseCookie, ac.CookieName = c["enabled"] == true, name(c)
	}
}

// loadAuthConfig gives the auth config Tyk's loader makes for method from a converted document, and whether
// it stores one.
func loadAuthConfig(t *testing.T, doc any, method string) (authConfig, bool) {
	t.Helper()
	auth, _ := lookupPath(doc, "x-tyk-api-gateway", "server", "authentication").(map[string]any)
	if auth == nil {
		t.Fatalf("no server.authentication in %v", doc)
	}
	ac := authConfig{DisableHeader: true}
	switch method {
	case hmacType, oidcType, coprocessType:
		key := map[string]string{hmacType: "hmac", oidcType: "oidc", coprocessType: "custom"}[method]
		obj, ok := auth[key].(map[string]any)
		if !ok {
			t.Fatalf("authentication.%s is missing", key)
		}
		ac = authConfig{}
		loadSources(obj, &ac)
		if method == coprocessType && ac == (authConfig{DisableHeader: true}) {
			return authConfig{}, false
		}
		return ac, true
	}
	obj, ok := lookupPath(auth, "securitySchemes", method).(map[string]any)
	if !ok {
		t.Fatalf("authentication.securitySchemes.%s is missing", method)
	}
	loadSources(obj, &ac)
	if method == authTokenType {
		scheme, _ := lookupPath(doc, "components", "securitySchemes", method).(map[string]any)
		name, _ := scheme["name"].(string)
		switch scheme["in"] {
		case "header":
			ac.AuthHeaderName, ac.DisableHeader = name, false
		case "query":
			ac.ParamName, ac.UseParam = name, true
		case "cookie":
			ac.CookieName, ac.UseCookie = name, true
		}
	}
	return ac, true
}

// authMethods enables one classic authentication method on a definition.
var authMethods = map[string]func(def map[string]any){
	authTokenType: func(def map[string]any) { def["use_standard_auth"] = true },
	jwtType: func(def map[string]any) {
		def["enable_jwt"], def["jwt_signing_method"], def["jwt_source"] = true, "rsa", "aHR0cHM6Ly9pZHAudGVzdC9qd2tz"
	},
	basicType: func(def map[string]any) { def["use_basic_auth"] = true },
	oauthType: func(def map[string]any) {
		def["use_oauth2"] = true
		def["oauth_meta"] = map[string]any{"allowed_access_types": []any{"client_credentials"}, "allowed_authorize_types": []any{"token"}}
	},
	externalOAuthType: func(def map[string]any) {
		def["external_oauth"] = map[string]any{"enabled": true, "providers": []any{
			map[string]any{"jwt": map[string]any{"enabled": true, "signing_method": "hmac", "source": "c2VjcmV0"}}}}
	},
	hmacType: func(def map[string]any) { def["enable_signature_checking"] = true },
	oidcType: func(def map[string]any) {
		def["use_openid"] = true
		def["openid_options"] = map[string]any{"providers": []any{map[string]any{"issuer": "https://idp.test/", "client_ids": map[string]any{"YQ==": "pol"}}}}
	},
	coprocessType: func(def map[string]any) {
		def["custom_plugin_auth_enabled"], def["enable_coprocess_auth"] = true, true
		def["custom_middleware"] = map[string]any{"driver": "grpc", "auth_check": map[string]any{"name": "Auth"}}
	},
}

// authConfigCases are classic credential placements, from the defaults to every source renamed.
var authConfigCases = []struct {
	name string
	ac   string // the classic auth_configs entry, JSON
}{
	{"defaults", `{}`},
	{"default header named", `{"auth_header_name":"Authorization"}`},
	{"renamed header", `{"auth_header_name":"X-Api-Key"}`},
	{"header and query", `{"use_param":true}`},
	{"header and named query", `{"auth_header_name":"X-Api-Key","use_param":true,"param_name":"key"}`},
	{"renamed header and cookie", `{"auth_header_name":"X-Api-Key","use_cookie":true}`},
	{"all three named", `{"auth_header_name":"X-Api-Key","use_param":true,"param_name":"key","use_cookie":true,"cookie_name":"session"}`},
	{"query only", `{"disable_header":true,"use_param":true}`},
	{"query only, renamed header", `{"disable_header":true,"auth_header_name":"X-Api-Key","use_param":true}`},
	{"cookie only", `{"disable_header":true,"use_cookie":true,"cookie_name":"session"}`},
	{"query and cookie", `{"disable_header":true,"use_param":true,"param_name":"key","use_cookie":true}`},
	{"names without flags", `{"param_name":"key","cookie_name":"session"}`},
}

// TestCredentialSourcesPerMethod converts every placement for every method, loads the document back the way
// Tyk does, and checks that the gateway would read credentials from the same places under the same names.
func TestCredentialSourcesPerMethod(t *testing.T) {
	for method, enable := range authMethods {
		for _, tc := range authConfigCases {
			t.Run(method+"/"+tc.name, func(t *testing.T) {
				var classic authConfig
				if err := json.Unmarshal([]byte(tc.ac), &classic); err != nil {
					t.Fatal(err)
				}
				def := classicDef("auth-"+method, "Auth", "/auth/")
				def["use_keyless"] = false
				enable(def)
				var ac map[string]any
				_ = json.Unmarshal([]byte(tc.ac), &ac)
				def["auth_configs"] = map[string]any{method: ac}
				res, err := convertDef(t, def, Options{})
				if err != nil {
					t.Fatalf("convert: %v", err)
				}
				doc := decodeJSON(t, res.Base.JSON)
				loaded, stored := loadAuthConfig(t, doc, method)
				if !stored {
					loaded = authConfig{} // the gateway falls back to an empty config
				}
				if got, want := gatewaySources(loaded), gatewaySources(classic); got != want {
					t.Errorf("after loading, the gateway reads credentials from %+v; classic read them from %+v\n%s",
						got, want, lookupPath(doc, "x-tyk-api-gateway", "server", "authentication"))
				}
				if method != authTokenType {
					// the header is always written, with its name, so nothing depends on a default
					obj := lookupPath(doc, "x-tyk-api-gateway", "server", "authentication")
					path := map[string][]string{hmacType: {"hmac"}, oidcType: {"oidc"}, coprocessType: {"custom"}}[method]
					if path == nil {
						path = []string{"securitySchemes", method}
					}
					h, _ := lookupPath(obj, append(path, "header")...).(map[string]any)
					if h == nil || h["enabled"] != !classic.DisableHeader || h["name"] != orDefault(classic.AuthHeaderName, "Authorization") {
						t.Errorf("header source = %v, want enabled %v and name %q", h, !classic.DisableHeader, orDefault(classic.AuthHeaderName, "Authorization"))
					}
				}
			})
		}
	}
}

// TestCredentialSourcesLegacyAuthBlock: token and JWT APIs without an auth_configs entry read the deprecated
// auth block, and keep reading its places after migration.
func TestCredentialSourcesLegacyAuthBlock(t *testing.T) {
	for _, method := range []string{authTokenType, jwtType} {
		def := classicDef("legacy-"+method, "Legacy", "/legacy/")
		def["use_keyless"] = false
		authMethods[method](def)
		def["auth"] = map[string]any{"auth_header_name": "X-Legacy", "use_cookie": true}
		res, err := convertDef(t, def, Options{})
		if err != nil {
			t.Fatal(err)
		}
		loaded, _ := loadAuthConfig(t, decodeJSON(t, res.Base.JSON), method)
		want := readSources{Header: "X-Legacy", Cookie: "X-Legacy"}
		if got := gatewaySources(loaded); got != want {
			t.Errorf("%s: reads %+v, want %+v", method, got, want)
		}
	}
}

// TestAuthTokenWithoutSourceFails: an auth token read from no place (even with client certificates) cannot
// be described by an apiKey scheme, which always switches one place on.
func TestAuthTokenWithoutSourceFails(t *testing.T) {
	for _, ac := range []map[string]any{
		{"disable_header": true},
		{"disable_header": true, "use_certificate": true},
		{"disable_header": true, "param_name": "key", "cookie_name": "session"},
	} {
		t.Run(fmt.Sprint(ac), func(t *testing.T) {
			def := classicDef("closed", "Closed", "/closed/")
			def["use_keyless"], def["use_standard_auth"] = false, true
			def["auth_configs"] = map[string]any{"authToken": ac}
			expectFailure(t, def, "auth_configs.authToken")
		})
	}
}

// TestCredentialSourcesInEveryVersion: child version documents carry the same explicit sources as the base.
func TestCredentialSourcesInEveryVersion(t *testing.T) {
	def := classicDef("auth-versions", "Versions", "/versions/")
	def["use_keyless"] = false
	authMethods[jwtType](def)
	def["auth_configs"] = map[string]any{jwtType: map[string]any{"auth_header_name": "X-Jwt", "use_cookie": true}}
	def["definition"] = map[string]any{"location": "header", "key": "x-api-version"}
	def["version_data"] = map[string]any{"not_versioned": false, "default_version": "v1",
		"versions": map[string]any{"v1": map[string]any{}, "v2": map[string]any{}, "v3": map[string]any{}}}
	res, err := convertDef(t, def, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Versions) != 2 {
		t.Fatalf("%d child versions, want 2", len(res.Versions))
	}
	want := readSources{Header: "X-Jwt", Cookie: "X-Jwt"}
	for _, d := range append([]Document{res.Base}, res.Versions...) {
		loaded, _ := loadAuthConfig(t, decodeJSON(t, d.JSON), jwtType)
		if got := gatewaySources(loaded); got != want {
			t.Errorf("%s: the gateway reads %+v, want %+v", d.APIID, got, want)
		}
	}
}
