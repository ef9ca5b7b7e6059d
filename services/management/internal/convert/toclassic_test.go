package convert

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A Tyk OAS document written by hand, as the OAS endpoints and tyk-sync store them: its own scheme names,
// its own operationIds, a scheme the first security requirement does not name.
const handWritten = `{"openapi":"3.0.3","info":{"title":"Users","version":"1"},
 "components":{"securitySchemes":{"api_key":{"type":"apiKey","in":"header","name":"X-Key"},"bearer":{"type":"http","scheme":"bearer","bearerFormat":"JWT"}}},
 "security":[{"api_key":[]}],
 "paths":{"/users/{id}":{"get":{"operationId":"getUser","responses":{"200":{"description":"ok"}}}},
          "/users/me":{"get":{"operationId":"me","responses":{"200":{"description":"ok"}}}}},
 "x-tyk-api-gateway":{"info":{"id":"users","dbId":"5e9d9544a1dcd60001d0ed20","orgId":"org","name":"Users","state":{"active":true}},
  "upstream":{"url":"http://users.internal/"},
  "server":{"listenPath":{"value":"/users/","strip":true},"authentication":{"enabled":true,
   "securitySchemes":{"api_key":{"enabled":true},"bearer":{"enabled":true,"source":"https://idp/jwks"}}}},
  "middleware":{"operations":{"getUser":{"allow":{"enabled":true},"rateLimit":{"enabled":true,"rate":10,"per":"1m"}},"me":{"allow":{"enabled":true}}}}}}`

func TestToClassicHandWritten(t *testing.T) {
	out, err := ToClassic([]byte(handWritten))
	if err != nil {
		t.Fatal(err)
	}
	var got classicAPI
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		have, want any
	}{
		{"is_oas", got.IsOAS, true},
		{"api_id", got.APIID, "users"},
		{"id", got.ID, "5e9d9544a1dcd60001d0ed20"},
		{"org_id", got.OrgID, "org"},
		{"listen_path", got.Proxy.ListenPath, "/users/"},
		{"strip_listen_path", got.Proxy.StripListenPath, true},
		{"target_url", got.Proxy.TargetURL, "http://users.internal/"},
		{"use_keyless", got.UseKeyless, false},
		{"use_standard_auth", got.UseStandardAuth, true},
		// the apiKey scheme names where the token is read, as Tyk's extraction reads it
		{"auth_configs.authToken", got.AuthConfigs[authTokenType], authConfig{Name: "api_key", AuthHeaderName: "X-Key"}},
		// a scheme the first security requirement does not name is not enforced
		{"enable_jwt", got.EnableJWT, false},
		{"auth_configs.jwt present", got.AuthConfigs[jwtType] != (authConfig{}), false},
		{"not_versioned", got.VersionData.NotVersioned, true},
	} {
		if !reflect.DeepEqual(c.have, c.want) {
			t.Errorf("%s: %#v, want %#v", c.name, c.have, c.want)
		}
	}
	ep := got.VersionData.Versions[""].ExtendedPaths
	// its own operationIds: the OpenAPI paths, the literal one before the templated one
	want := []endpointMeta{{Path: "/users/me", Method: "GET"}, {Path: "/users/{id}", Method: "GET"}}
	if !reflect.DeepEqual(ep.WhiteList, want) {
		t.Errorf("white_list: %+v, want %+v", ep.WhiteList, want)
	}
	if len(ep.RateLimit) != 1 || ep.RateLimit[0] != (endpointRateLimit{Path: "/users/{id}", Method: "GET", Rate: 10, Per: 60}) {
		t.Errorf("rate_limit: %+v", ep.RateLimit)
	}
}

func TestToClassicRefusesWhatIsNotADocument(t *testing.T) {
	for _, doc := range []string{``, `[]`, `"x"`, `{"x-tyk-api-gateway":[]}`, `{"paths":{"/a":5}}`} {
		if out, err := ToClassic([]byte(doc)); err == nil {
			t.Errorf("%s: derived %s, want an error", doc, out)
		}
	}
}
