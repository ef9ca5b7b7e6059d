package gwfields

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		c    *Checker
		doc  string
		want string // "" when accepted
	}{
		{"policy", Policy, `{"name":"p","rate":10.5,"per":1,"quota_max":-1,"active":true,"tags":["a"],"access_rights":{"x":{"api_id":"x","versions":["Default"],"limit":{"rate":1}}},"meta_data":{"any":["thing",1]}}`, ""},
		{"nulls", Policy, `{"rate":null,"access_rights":null,"tags":[null]}`, ""},
		{"rate as text", Policy, `{"rate":"fast"}`, "rate must be a number"},
		{"active as text", Policy, `{"active":"yes"}`, "active must be a boolean"},
		{"fractional quota", Policy, `{"quota_max":1.5}`, "quota_max must be an integer"},
		{"nested", Policy, `{"access_rights":{"a":{"versions":"Default"}}}`, "access_rights.a.versions must be an array"},
		{"array element", Policy, `{"tags":["a",1]}`, "tags[1] must be a string"},
		{"classic", Classic, `{"name":"c","active":true,"proxy":{"listen_path":"/c/","target_url":"http://u","transport":{"ssl_min_version":771}},"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}},"x-unknown":{"a":"b"}}`, ""},
		{"classic active", Classic, `{"active":"yes"}`, "active must be a boolean"},
		{"classic listen port", Classic, `{"listen_port":"8080"}`, "listen_port must be an integer"},
		{"classic proxy", Classic, `{"proxy":"http://u"}`, "proxy must be an object"},
		{"negative uint16", Classic, `{"proxy":{"transport":{"ssl_min_version":-1}}}`, "proxy.transport.ssl_min_version must be an integer from 0 to 65535"},
		{"uint16 overflow", Classic, `{"proxy":{"transport":{"ssl_max_version":65536}}}`, "proxy.transport.ssl_max_version must be an integer from 0 to 65535"},
		{"version map", Classic, `{"version_data":{"versions":{"v1":{"use_extended_paths":"true"}}}}`, "version_data.versions.v1.use_extended_paths must be a boolean"},
		// encoding/json matches member names case-insensitively when none
		// matches exactly: "ACTIVE" sets active.
		{"folded name", Classic, `{"ACTIVE":"yes"}`, "ACTIVE must be a boolean"},
		{"folded nested", Policy, `{"Access_Rights":{"a":{"Limit":{"Rate":"x"}}}}`, "Access_Rights.a.Limit.Rate must be a number"},
		{"map keys are not folded", Classic, `{"version_data":{"versions":{"NAME":{"name":"x"}}}}`, ""},
		{"number too large", Policy, `{"rate":1e400}`, "rate must be a number"},
		// Types with their own decoders, as the gateway's read them.
		{"object id", Policy, `{"_id":"5f0c0c0c0c0c0c0c0c0c0c0c"}`, ""},
		{"empty object id", Policy, `{"_id":""}`, ""},
		{"short object id", Policy, `{"_id":"abc"}`, `_id must be an object id ("" or 24 hexadecimal digits)`},
		{"classic object id", Classic, `{"id":"not-hex-not-hex-not-hex-"}`, `id must be an object id ("" or 24 hexadecimal digits)`},
		{"time", Classic, `{"graphql":{"last_schema_update":"2024-01-02T03:04:05Z"}}`, ""},
		{"bad time", Classic, `{"graphql":{"last_schema_update":"yesterday"}}`, "graphql.last_schema_update must be an RFC 3339 time (a string)"},
		{"duration text", Classic, `{"jwt_jwks_uris":[{"url":"u","cache_timeout":"anything"}]}`, ""},
		{"duration number", Classic, `{"jwt_jwks_uris":[{"url":"u","cache_timeout":60}]}`, `jwt_jwks_uris[0].cache_timeout must be a duration string (e.g. "1m")`},
		{"duration null", Classic, `{"jwt_jwks_uris":[{"url":"u","cache_timeout":null}]}`, `jwt_jwks_uris[0].cache_timeout must be a duration string (e.g. "1m")`},
		{"free-form", Classic, `{"config_data":{"a":[1,"x",{"b":null}]},"graphql":{"engine":{"data_sources":[{"config":"anything"}]}}}`, ""},
	} {
		err := c.c.Check([]byte(c.doc))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCheckNested: fields of nested structs, maps of structs and slices of
// structs are typed to their leaves, each refusal naming the full path.
// The types are Tyk Gateway v5.11.1's (apidef, user).
func TestCheckNested(t *testing.T) {
	classic := []struct{ doc, want string }{
		{`{"version_data":{"versions":{"Default":{"extended_paths":{"url_rewrites":[{"path":"/a","method":"GET","match_pattern":"/a","rewrite_to":"/b"},{"method":5}]}}}}}`,
			"version_data.versions.Default.extended_paths.url_rewrites[1].method must be a string"},
		{`{"version_data":{"versions":{"v1":{"extended_paths":{"white_list":[{"path":"/a","method_actions":{"GET":{"action":"no_action","code":"200"}}}]}}}}}`,
			"version_data.versions.v1.extended_paths.white_list[0].method_actions.GET.code must be an integer"},
		{`{"version_data":{"versions":{"v1":{"extended_paths":{"transform_headers":[{"path":"/a","method":"GET","delete_headers":"X-A"}]}}}}}`,
			"version_data.versions.v1.extended_paths.transform_headers[0].delete_headers must be an array"},
		{`{"version_data":{"versions":{"v1":{"extended_paths":{"hard_timeouts":[{"path":"/a","method":"GET","timeout":"5s"}]}}}}}`,
			"version_data.versions.v1.extended_paths.hard_timeouts[0].timeout must be an integer"},
		{`{"version_data":{"versions":{"v1":{"extended_paths":{"size_limits":[{"path":"/a","method":"POST","size_limit":-1}]}}}}}`, ""},
		{`{"version_data":{"versions":{"v1":{"extended_paths":{"cache":"/a"}}}}}`,
			"version_data.versions.v1.extended_paths.cache must be an array"},
		{`{"version_data":{"versions":{"v1":{"extended_paths":{"url_rewrites":[{"path":"/a","triggers":[{"on":"all","options":{"header_matches":{"X-A":{"match_rx":1}}}}]}]}}}}}`,
			"version_data.versions.v1.extended_paths.url_rewrites[0].triggers[0].options.header_matches.X-A.match_rx must be a string"},
		{`{"version_data":{"versions":{"v1":{"paths":{"ignored":"/a"}}}}}`, "version_data.versions.v1.paths.ignored must be an array"},
		{`{"CORS":{"enable":true,"allowed_origins":["*"],"max_age":"1h"}}`, "CORS.max_age must be an integer"},
		{`{"auth_configs":{"authToken":{"use_param":"yes"}}}`, "auth_configs.authToken.use_param must be a boolean"},
		{`{"proxy":{"service_discovery":{"use_discovery_service":true,"cache_timeout":"60"}}}`, "proxy.service_discovery.cache_timeout must be an integer"},
		{`{"uptime_tests":{"check_list":[{"url":"http://u","timeout":"5s"}]}}`, "uptime_tests.check_list[0].timeout must be an integer"},
		{`{"event_handlers":{"events":{"QuotaExceeded":[{"handler_name":1}]}}}`, "event_handlers.events.QuotaExceeded[0].handler_name must be a string"},
		{`{"cache_options":{"cache_timeout":"60"}}`, "cache_options.cache_timeout must be an integer"},
		{`{"global_rate_limit":{"rate":"fast"}}`, "global_rate_limit.rate must be a number"},
		{`{"openid_options":{"providers":[{"issuer":"i","client_ids":{"a":1}}]}}`, "openid_options.providers[0].client_ids.a must be a string"},
		{`{"graphql":{"enabled":true,"engine":{"field_configs":[{"type_name":"Q","disable_default_mapping":"no"}]}}}`,
			"graphql.engine.field_configs[0].disable_default_mapping must be a boolean"},
		{`{"upstream_auth":{"enabled":true,"basic_auth":{"enabled":"on"}}}`, "upstream_auth.basic_auth.enabled must be a boolean"},
		{`{"analytics_plugin":{"enable":1}}`, "analytics_plugin.enable must be a boolean"},
		{`{"custom_middleware":{"pre":[{"name":"f","require_session":"yes"}]}}`, "custom_middleware.pre[0].require_session must be a boolean"},
	}
	policy := []struct{ doc, want string }{
		{`{"access_rights":{"a":{"allowed_urls":[{"url":"/a","methods":["GET",1]}]}}}`, "access_rights.a.allowed_urls[0].methods[1] must be a string"},
		{`{"access_rights":{"a":{"limit":{"quota_max":"10"}}}}`, "access_rights.a.limit.quota_max must be an integer"},
		{`{"access_rights":{"a":{"endpoints":[{"path":"/a","methods":[{"name":"GET","limit":{"rate":"x"}}]}]}}}`,
			"access_rights.a.endpoints[0].methods[0].limit.rate must be a number"},
		{`{"access_rights":{"a":{"restricted_types":[{"name":"Q","fields":"a"}]}}}`, "access_rights.a.restricted_types[0].fields must be an array"},
		{`{"access_rights":{"a":{"field_access_rights":[{"type_name":"Q","limits":{"max_query_depth":1.5}}]}}}`,
			"access_rights.a.field_access_rights[0].limits.max_query_depth must be an integer"},
		{`{"smoothing":{"enabled":true,"threshold":"x"}}`, "smoothing.threshold must be an integer"},
		{`{"partitions":{"quota":"true"}}`, "partitions.quota must be a boolean"},
	}
	run := func(what string, c *Checker, cases []struct{ doc, want string }) {
		for _, tc := range cases {
			got := ""
			if err := c.Check([]byte(tc.doc)); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("%s %s: %q, want %q", what, tc.doc, got, tc.want)
			}
		}
	}
	run("classic", Classic, classic)
	run("policy", Policy, policy)
}

// TestFixturesAccepted: every classic definition in the repository's
// testdata (the converter's inputs, the full-struct definition) passes the
// check whole.
func TestFixturesAccepted(t *testing.T) {
	files, _ := filepath.Glob("../convert/testdata/*.json")
	more, _ := filepath.Glob("../app/testdata/*.json")
	files = append(files, more...)
	if len(files) < 20 {
		t.Fatalf("%d fixtures found, want the converter's and app's", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wrapped struct {
			Def json.RawMessage `json:"api_definition"`
		}
		if json.Unmarshal(b, &wrapped) == nil && len(wrapped.Def) > 0 {
			b = wrapped.Def
		}
		if err := Classic.Check(b); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func BenchmarkCheckClassic(b *testing.B) {
	file, err := os.ReadFile("../app/testdata/classic-full-struct.json")
	if err != nil {
		b.Fatal(err)
	}
	var wrapped struct {
		Def json.RawMessage `json:"api_definition"`
	}
	if err := json.Unmarshal(file, &wrapped); err != nil {
		b.Fatal(err)
	}
	doc := []byte(wrapped.Def)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if err := Classic.Check(doc); err != nil {
			b.Fatal(err)
		}
	}
}
