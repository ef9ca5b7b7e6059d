package convert

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Findings of an adversarial audit of the conversion: classic settings that were dropped without a message,
// conversions that opened an API, and inputs whose documents broke the extension schema.

// lookupIndexed walks a decoded document like lookupPath, also stepping into arrays by index.
func lookupIndexed(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// keyed makes a classic API that requires authentication.
func keyed(def map[string]any) map[string]any {
	def["use_keyless"] = false
	return def
}

// setVersion merges members into the Default version of a classicDef.
func setVersion(def map[string]any, members map[string]any) map[string]any {
	v := def["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)
	for k, m := range members {
		v[k] = m
	}
	return def
}

// TestAuditSettingsAreConverted: classic settings that used to vanish from the converted API.
func TestAuditSettingsAreConverted(t *testing.T) {
	api := func(mutate func(map[string]any)) map[string]any {
		def := classicDef("audit-1", "Audit", "/audit/")
		mutate(def)
		return def
	}
	const x = "x-tyk-api-gateway."
	for _, c := range []struct {
		name string
		def  map[string]any
		want map[string]any // flattened path → value
	}{
		{
			// Tyk's classic field is proxy.target_list; "targets" is only the Go field name.
			name: "proxy.target_list",
			def: api(func(d map[string]any) {
				p := d["proxy"].(map[string]any)
				p["enable_load_balancing"], p["target_list"] = true, []any{"http://b.test", "http://a.test", "http://b.test"}
			}),
			want: map[string]any{
				x + "upstream.loadBalancing.enabled":          true,
				x + "upstream.loadBalancing.targets.0.url":    "http://a.test",
				x + "upstream.loadBalancing.targets.1.url":    "http://b.test",
				x + "upstream.loadBalancing.targets.1.weight": float64(2),
			},
		},
		{
			// Tyk's classic field is upstream_auth.oauth.password, not password_authentication.
			name: "upstream_auth.oauth.password",
			def: api(func(d map[string]any) {
				d["upstream_auth"] = map[string]any{"enabled": true, "oauth": map[string]any{"enabled": true, "allowed_authorize_types": []any{"password"},
					"password": map[string]any{"client_id": "cid", "client_secret": "cs", "username": "u", "password": "p", "token_url": "https://idp.test/token"}}}
			}),
			want: map[string]any{
				x + "upstream.authentication.oauth.enabled":           true,
				x + "upstream.authentication.oauth.password.clientId": "cid",
				x + "upstream.authentication.oauth.password.username": "u",
				x + "upstream.authentication.oauth.password.tokenUrl": "https://idp.test/token",
			},
		},
		{
			// The gateway serves an API's certificates whether or not it has a custom domain.
			name: "certificates without a domain",
			def:  api(func(d map[string]any) { d["certificates"] = []any{"server-cert"} }),
			want: map[string]any{
				x + "server.customDomain.enabled":        true,
				x + "server.customDomain.name":           "",
				x + "server.customDomain.certificates.0": "server-cert",
			},
		},
		{
			name: "basic auth without an auth_configs entry beside an auth token",
			def: api(func(d map[string]any) {
				keyed(d)
				d["use_standard_auth"], d["use_basic_auth"] = true, true
				d["base_identity_provided_by"] = "auth_token"
			}),
			want: map[string]any{
				"components.securitySchemes.basic.scheme":                 "basic",
				"components.securitySchemes.authToken.type":               "apiKey",
				"security.0.basic":                                        []any{},
				"security.0.authToken":                                    []any{},
				x + "server.authentication.securitySchemes.basic.enabled": true,
			},
		},
		{
			name: "oauth without an auth_configs entry",
			def: api(func(d map[string]any) {
				keyed(d)
				d["use_oauth2"] = true
				d["oauth_meta"] = map[string]any{"allowed_access_types": []any{"client_credentials"}}
			}),
			want: map[string]any{
				"components.securitySchemes.oauth.type":                   "oauth2",
				"security.0.oauth":                                        []any{},
				x + "server.authentication.securitySchemes.oauth.enabled": true,
			},
		},
		{
			name: "hmac without an auth_configs entry beside JWT",
			def: api(func(d map[string]any) {
				keyed(d)
				d["enable_signature_checking"], d["enable_jwt"] = true, true
				d["base_identity_provided_by"] = "jwt_claim"
				d["hmac_allowed_algorithms"] = []any{"hmac-sha256"}
			}),
			want: map[string]any{
				x + "server.authentication.hmac.enabled":             true,
				x + "server.authentication.hmac.allowedAlgorithms.0": "hmac-sha256",
				"components.securitySchemes.jwt.scheme":              "bearer",
			},
		},
		{
			// A rule for a header, query value, ... whose name is empty must still name it: the schema
			// requires "name" (found by FuzzConvert).
			name: "url rewrite rule with an empty name",
			def: setVersion(classicDef("audit-2", "Audit", "/audit/"), map[string]any{"extended_paths": map[string]any{
				"url_rewrites": []any{map[string]any{"path": "/r", "method": "GET", "match_pattern": "/r", "rewrite_to": "/s",
					"triggers": []any{map[string]any{"on": "all", "rewrite_to": "/t", "options": map[string]any{
						"query_val_matches": map[string]any{"": map[string]any{"match_rx": "x"}},
						"payload_matches":   map[string]any{"match_rx": "y"}}}}}},
			}}),
			want: map[string]any{
				x + "middleware.operations.rGET.urlRewrite.triggers.0.rules.0.in":   "query",
				x + "middleware.operations.rGET.urlRewrite.triggers.0.rules.0.name": "",
				x + "middleware.operations.rGET.urlRewrite.triggers.0.rules.1.in":   "requestBody",
				x + "middleware.operations.rGET.urlRewrite.triggers.0.rules.1.name": nil,
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := convertDef(t, c.def, Options{})
			if err != nil {
				t.Fatal(err)
			}
			expectValidDocument(t, "base", res.Base.JSON)
			doc := decodeJSON(t, res.Base.JSON)
			for path, want := range c.want {
				got := lookupIndexed(doc, path)
				if n, ok := got.(interface{ Float64() (float64, error) }); ok {
					got, _ = n.Float64()
				}
				if string(mustMarshal(t, got)) != string(mustMarshal(t, want)) {
					t.Errorf("%s = %s, want %s", path, mustMarshal(t, got), mustMarshal(t, want))
				}
			}
			if t.Failed() {
				t.Logf("document: %s", res.Base.JSON)
			}
		})
	}
}

// TestAuditNeverMoreOpen: conversions that would have skipped authentication where classic required it.
func TestAuditNeverMoreOpen(t *testing.T) {
	inert := func(paths map[string]any) map[string]any {
		def := keyed(classicDef("audit-3", "Audit", "/audit/"))
		def["use_standard_auth"] = true
		return setVersion(def, map[string]any{"use_extended_paths": false, "extended_paths": paths})
	}
	for _, c := range []struct {
		name  string
		def   map[string]any
		words []string
	}{
		{
			// With use_extended_paths false the gateway reads only the legacy path lists, so classic
			// authenticates /admin; Tyk OAS would skip authentication there.
			name:  "ignored entry of an inert extended_paths",
			def:   inert(map[string]any{"ignored": []any{map[string]any{"path": "/admin", "method": "GET"}}}),
			words: []string{"extended_paths.ignored", "GET /admin", "use_extended_paths"},
		},
		{
			name: "mock reply of an inert extended_paths",
			def: inert(map[string]any{"white_list": []any{map[string]any{"path": "/m",
				"method_actions": map[string]any{"POST": map[string]any{"action": "reply", "code": 200}}}}}),
			words: []string{"extended_paths.white_list", "POST /m", "use_extended_paths"},
		},
		{
			name:  "mock_response of an inert extended_paths",
			def:   inert(map[string]any{"mock_response": []any{map[string]any{"path": "/mock", "method": "GET", "code": 200}}}),
			words: []string{"extended_paths.mock_response", "GET /mock", "use_extended_paths"},
		},
	} {
		t.Run(c.name, func(t *testing.T) { expectFailure(t, c.def, c.words...) })
	}

	// Without authentication there is nothing to skip, so the entries convert as Tyk converts them (Tyk's
	// own fixtures rely on this); a disabled entry skips nothing either.
	for name, def := range map[string]map[string]any{
		"keyless": setVersion(classicDef("audit-4", "Audit", "/audit/"), map[string]any{"use_extended_paths": false,
			"extended_paths": map[string]any{"ignored": []any{map[string]any{"path": "/admin", "method": "GET"}}}}),
		"disabled entry": inert(map[string]any{"ignored": []any{map[string]any{"path": "/admin", "method": "GET", "disabled": true}}}),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := convertDef(t, def, Options{})
			if err != nil {
				t.Fatal(err)
			}
			expectValidDocument(t, "base", res.Base.JSON)
		})
	}
}

// TestAuditVersionedExpiration: the API-level expiration of a versioned classic API refuses nothing (the
// gateway checks it only for not-versioned APIs; make test-gateway shows a versioned API answering 200 past
// it) and only sends X-Tyk-Api-Expires. The API converts, each document keeps its own version's expiry, and
// the report names every version whose header changes.
func TestAuditVersionedExpiration(t *testing.T) {
	versioned := func(exp string, v1, v2 string) map[string]any {
		def := classicDef("audit-5", "Audit", "/audit/")
		def["expiration"] = exp
		def["definition"] = map[string]any{"location": "header", "key": "x-api-version", "fallback_to_default": true}
		def["version_data"] = map[string]any{"not_versioned": false, "default_version": "v1", "versions": map[string]any{
			"v1": map[string]any{"expires": v1}, "v2": map[string]any{"expires": v2}}}
		return def
	}
	for _, c := range []struct {
		name          string
		def           map[string]any
		headerChanges []string // the versions whose X-Tyk-Api-Expires changes
	}{
		{"base version expires later", versioned("2030-01-01 00:00", "2031-01-01 00:00", "2029-01-01 00:00"), []string{"v1", "v2"}},
		{"child version never expires", versioned("2030-01-01 00:00", "2030-01-01 00:00", ""), []string{"v2"}},
		{"every version expires then", versioned("2030-01-01 00:00", "2030-01-01 00:00", "2030-01-01 00:00"), nil},
		{"no API-level expiration", versioned("", "2031-01-01 00:00", ""), nil},
		{"an API-level expiration that does not parse sends no header", versioned("soon", "", ""), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := convertDef(t, c.def, Options{})
			if err != nil {
				t.Fatal(err)
			}
			expectValidDocument(t, "base", res.Base.JSON)
			var changed []string
			for _, w := range res.Warnings {
				if strings.HasPrefix(w, "expiration: ") && strings.Contains(w, "X-Tyk-Api-Expires") {
					for _, v := range []string{"v1", "v2"} {
						if strings.Contains(w, strconv.Quote(v)) {
							changed = append(changed, v)
						}
					}
				}
			}
			if !slices.Equal(changed, c.headerChanges) {
				t.Errorf("header warnings for %q, want %q: %q", changed, c.headerChanges, res.Warnings)
			}
		})
	}
}
