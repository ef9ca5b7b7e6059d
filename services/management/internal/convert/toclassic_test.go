package convert

import (
	"encoding/json"
	"reflect"
	"strings"
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

// TestToClassicAsExtractTo restates what Tyk's own reading of a document (OAS.ExtractTo, Tyk v5.11.1) gives for
// the fields where ToClassic used to differ, found by running ExtractTo over every document the converter's
// tests produce and comparing field by field. Each want is ExtractTo's value.
func TestToClassicAsExtractTo(t *testing.T) {
	const minimal = `{"openapi":"3.0.3","info":{"title":"M","version":"1"},"paths":{},
 "x-tyk-api-gateway":{"info":{"id":"m","name":"M","state":{"active":true}},"upstream":{"url":"http://m.test/"},
  "server":{"listenPath":{"value":"/m/","strip":true}}%s}}`
	with := func(server, rest string) string {
		doc := strings.Replace(minimal, `"strip":true}}`, `"strip":true}`+server+`}`, 1)
		return strings.Replace(doc, "%s", rest, 1)
	}
	for _, c := range []struct {
		name string
		doc  string
		want map[string]any // flattened keys of the derived definition
	}{
		{"a part the document does not hold is switched off", with("", ""), map[string]any{
			"upstream_certificates_disabled": true, "certificate_pinning_disabled": true, "global_rate_limit.disabled": true,
			"proxy.service_discovery.cache_disabled": true, "uptime_tests.disabled": true,
			"uptime_tests.config.service_discovery.cache_disabled": true, "tags_disabled": true, "domain_disabled": true,
			"ip_access_control_disabled": true, "custom_middleware_bundle_disabled": true, "config_data_disabled": true,
			"custom_middleware.auth_check.disabled": true, "custom_middleware.id_extractor.disabled": true,
			`version_data.versions..global_headers_disabled`: true, `version_data.versions..global_response_headers_disabled`: true,
			`version_data.versions..global_size_limit_disabled`: true,
		}},
		{"ipAccessControl switched off keeps its lists off: no legacy switch", with(`,"ipAccessControl":{"enabled":false,"allow":["10.0.0.0/8"],"block":["10.1.0.0/16"]}`, ""), map[string]any{
			"ip_access_control_disabled": true, "enable_ip_whitelisting": false, "enable_ip_blacklisting": false, "allowed_ips.0": "10.0.0.0/8",
		}},
		{"ipAccessControl switched on", with(`,"ipAccessControl":{"enabled":true,"allow":["10.0.0.0/8"]}`, ""), map[string]any{
			"ip_access_control_disabled": false, "enable_ip_whitelisting": false,
		}},
		{"custom plugin authentication: custom_plugin_auth_enabled alone", with(`,"authentication":{"enabled":true,"custom":{"enabled":true,"header":{"enabled":true,"name":"Authorization"}}}`,
			`,"middleware":{"global":{"pluginConfig":{"driver":"grpc"}}}`), map[string]any{
			"custom_plugin_auth_enabled": true, "enable_coprocess_auth": false, "use_go_plugin_auth": false,
		}},
		{"service discovery without a cache block", strings.Replace(with("", ""), `"upstream":{"url":"http://m.test/"}`,
			`"upstream":{"url":"","serviceDiscovery":{"enabled":true,"queryEndpoint":"http://sd.test/"}}`, 1), map[string]any{
			"proxy.service_discovery.use_discovery_service": true, "proxy.service_discovery.cache_disabled": true,
		}},
		{"an uptime check's protocol is its URL's scheme", strings.Replace(with("", ""), `"upstream":{"url":"http://m.test/"}`,
			`"upstream":{"url":"http://m.test/","uptimeTests":{"enabled":true,"tests":[{"url":"https://m.test/health","method":"GET"},{"url":"tcp://m.test:81"}]}}`, 1), map[string]any{
			"uptime_tests.disabled": false, "uptime_tests.check_list.0.protocol": "https", "uptime_tests.check_list.0.url": "https://m.test/health",
			"uptime_tests.check_list.1.protocol": "tcp",
		}},
		{"a body template always reads the session", strings.Replace(with("", `,"middleware":{"operations":{"tPOST":{"transformRequestBody":{"enabled":true,"format":"json","body":"e30="},"transformResponseBody":{"enabled":true,"format":"json","path":"t.tmpl"}}}}`),
			`"paths":{}`, `"paths":{"/t":{"post":{"operationId":"tPOST","responses":{"200":{"description":"ok"}}}}}`, 1), map[string]any{
			`version_data.versions..extended_paths.transform.0.template_data.enable_session`:          true,
			`version_data.versions..extended_paths.transform.0.template_data.template_mode`:           "blob",
			`version_data.versions..extended_paths.transform_response.0.template_data.enable_session`: true,
			`version_data.versions..extended_paths.transform_response.0.template_data.template_mode`:  "file",
		}},
		{"no slug (legacy in Tyk OAS; ExtractTo leaves it out)", with(`,"slug":"legacy-slug"`, ""), map[string]any{"slug": ""}},
		{"auth configs of HMAC, OIDC and custom authentication carry no name", with(`,"authentication":{"enabled":true,`+
			`"hmac":{"enabled":true,"header":{"enabled":true,"name":"Authorization"}},"oidc":{"enabled":true,"header":{"enabled":true,"name":"X-Id"}},`+
			`"custom":{"enabled":true,"header":{"enabled":true,"name":"X-Auth"}}}`, ""), map[string]any{
			"auth_configs.hmac.name": "", "auth_configs.hmac.auth_header_name": "Authorization",
			"auth_configs.oidc.name": "", "auth_configs.oidc.auth_header_name": "X-Id",
			"auth_configs.coprocess.name": "", "auth_configs.coprocess.auth_header_name": "X-Auth",
		}},
		{"a log event handler is its prefix alone; webhook and custom handlers keep id and name", with(`,"eventHandlers":[`+
			`{"enabled":true,"trigger":"AuthFailure","type":"log","id":"l1","name":"log it","logPrefix":"auth"},`+
			`{"enabled":true,"trigger":"HostDown","type":"custom","id":"c1","name":"ignored","functionName":"onDown","path":"h.js"},`+
			`{"enabled":false,"trigger":"QuotaExceeded","type":"webhook","id":"w1","name":"hook","url":"https://h.test/","method":"POST","cooldownPeriod":"1m"}]`, ""), map[string]any{
			"event_handlers.events.AuthFailure.0.handler_meta.prefix": "auth", "event_handlers.events.AuthFailure.0.handler_meta.id": nil,
			"event_handlers.events.AuthFailure.0.handler_meta.name": nil, "event_handlers.events.AuthFailure.0.handler_meta.disabled": false,
			"event_handlers.events.HostDown.0.handler_meta.id": "c1", "event_handlers.events.HostDown.0.handler_meta.name": "onDown",
			"event_handlers.events.QuotaExceeded.0.handler_meta.id": "w1", "event_handlers.events.QuotaExceeded.0.handler_meta.name": "hook",
			"event_handlers.events.QuotaExceeded.0.handler_meta.disabled": true,
		}},
		{"a path parameter from a classic regular expression: every entry carries the OpenAPI path", strings.Replace(with("",
			`,"middleware":{"operations":{"old/[0-9]+GET":{"ignoreAuthentication":{"enabled":true},"trackEndpoint":{"enabled":true},`+
				`"urlRewrite":{"enabled":true,"pattern":"/old/([0-9]+)","rewriteTo":"/new/$1"}}}}`),
			`"paths":{}`, `"paths":{"/old/{customRegex1}":{"parameters":[{"name":"customRegex1","in":"path","required":true,`+
				`"schema":{"type":"string","pattern":"[0-9]+"}}],"get":{"operationId":"old/[0-9]+GET","responses":{"200":{"description":"ok"}}}}}`, 1), map[string]any{
			`version_data.versions..extended_paths.ignored.0.path`:               "/old/{customRegex1}",
			`version_data.versions..extended_paths.track_endpoints.0.path`:       "/old/{customRegex1}",
			`version_data.versions..extended_paths.url_rewrites.0.path`:          "/old/{customRegex1}",
			`version_data.versions..extended_paths.url_rewrites.0.match_pattern`: "/old/([0-9]+)",
			`version_data.versions..extended_paths.url_rewrites.0.rewrite_to`:    "/new/$1",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := ToClassic([]byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			flat := flatten(v, false)
			for k, want := range c.want {
				have, ok := flat[k]
				if !ok && want == false {
					continue // absent reads as false
				}
				if !reflect.DeepEqual(have, want) {
					t.Errorf("%s: %v, want %v (Tyk's OAS.ExtractTo)", k, have, want)
				}
			}
		})
	}
}

// TestOperationIndex: the operations the derivation reads from the paths' text, as a decoder of path items
// reads them: method and operationId keys in any case, the last of a key twice, null items skipped and null
// operations marked (they have no middleware), the root's paths key in any case; a path item or operation of another type, or an
// operationId that is not a string, fails the document.
func TestOperationIndex(t *testing.T) {
	cases := []struct {
		doc  string
		want operationIndex
	}{
		{`{"paths":{"/a":{"get":{"operationId":"g"},"POST":{"OperationID":"p"},"x-e":1,"parameters":[]},"/b":null}}`,
			operationIndex{{"/a", 0, "g", false}, {"/a", 2, "p", false}}},
		{`{"Paths":{"/a":{"get":{"operationId":"one"},"GET":{"operationId":"two"},"put":null,"delete":{}}}}`,
			operationIndex{{"/a", 0, "two", false}, {"/a", 1, "", true}, {"/a", 3, "", false}}},
		{`{"paths":{"/\u0061":{"g\u0065t":{"operationId":"\u0067","summary":"s"}}}}`, operationIndex{{"/a", 0, "g", false}}},
		{`{"openapi":"3.0.3"}`, nil},
		{`{"paths":null}`, nil},
	}
	for _, c := range cases {
		var got operationIndex
		if err := got.read([]byte(c.doc)); err != nil || !reflect.DeepEqual(got, c.want) && len(got)+len(c.want) > 0 {
			t.Errorf("%s: %v, %v; want %v", c.doc, got, err, c.want)
		}
	}
	for _, doc := range []string{`{"paths":[]}`, `{"paths":{"/a":1}}`, `{"paths":{"/a":{"get":"x"}}}`, `{"paths":{"/a":{"get":{"operationId":1}}}}`} {
		var got operationIndex
		if err := got.read([]byte(doc)); err == nil {
			t.Errorf("%s: read as %v", doc, got)
		}
		if _, err := ToClassic([]byte(doc)); err == nil {
			t.Errorf("%s: derived", doc)
		}
	}
}
