package convert

import (
	"slices"
	"testing"
)

// TestOAuthGrantsNeverWiden: Tyk's loader rebuilds oauth_meta.allowed_access_types from the scheme's OpenAPI
// flows (plus refresh_token from x-tyk's refreshToken), so the flows written must be exactly the classic
// grants; an API that allows no grant a flow can describe fails rather than gaining one.
func TestOAuthGrantsNeverWiden(t *testing.T) {
	flowGrant := map[string]string{"authorizationCode": "authorization_code", "clientCredentials": "client_credentials", "password": "password", "implicit": "implicit"}
	for _, tc := range []struct {
		name   string
		grants []any
		want   []string // the grants the loader reads back, sorted; nil: the API fails
	}{
		{"no grant", []any{}, nil},
		{"refresh only", []any{"refresh_token"}, nil},
		{"client credentials", []any{"client_credentials"}, []string{"client_credentials"}},
		{"code and refresh", []any{"authorization_code", "refresh_token"}, []string{"authorization_code", "refresh_token"}},
		{"all", []any{"implicit", "password", "client_credentials", "authorization_code", "refresh_token"},
			[]string{"authorization_code", "client_credentials", "implicit", "password", "refresh_token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := classicDef("oauth-1", "OAuth", "/oauth-api/")
			def["use_keyless"], def["use_oauth2"] = false, true
			def["oauth_meta"] = map[string]any{"allowed_access_types": tc.grants, "allowed_authorize_types": []any{"code"}}
			if tc.want == nil {
				expectFailure(t, def, "oauth_meta.allowed_access_types")
				return
			}
			res, err := convertDef(t, def, Options{})
			if err != nil {
				t.Fatal(err)
			}
			doc := decodeJSON(t, res.Base.JSON)
			var got []string
			flows, _ := lookupPath(doc, "components", "securitySchemes", "oauth", "flows").(map[string]any)
			for f := range flows {
				got = append(got, flowGrant[f])
			}
			if lookupPath(doc, "x-tyk-api-gateway", "server", "authentication", "securitySchemes", "oauth", "refreshToken") == true {
				got = append(got, "refresh_token")
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("loaded grants = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestExternalOAuthWithoutProvidersFails: Tyk's loader reads an oauth2 scheme without providers as Tyk's own
// OAuth, which would switch the API to another authentication method.
func TestExternalOAuthWithoutProvidersFails(t *testing.T) {
	def := classicDef("ext-1", "External", "/ext/")
	def["use_keyless"] = false
	def["external_oauth"] = map[string]any{"enabled": true, "providers": []any{}}
	expectFailure(t, def, "external_oauth.providers")
	authMethods[externalOAuthType](def) // with a provider it converts
	if _, err := convertDef(t, def, Options{}); err != nil {
		t.Fatal(err)
	}
}
