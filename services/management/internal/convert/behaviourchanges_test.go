package convert

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Issue 22: the classic definitions that behaved differently in a Tyk Gateway (v5.11) once migrated, restated
// as cases: the classic input, what the migrated document holds, and the report's warnings (exactly; none
// when the behaviour is kept). The gateway code behind each class is cited in warnings.go; make
// test-gateway replays some of them through a real gateway.

const (
	x = "x-tyk-api-gateway."
	// the warnings, as the report words them
	wExpiresHeader = `version_data.versions["Default"].expires: "3000-01-02 15:04": the X-Tyk-Api-Expires response header is ` +
		`no longer sent (a Tyk OAS API sends it only for x-tyk-api-gateway.info.expiration, which would also refuse every ` +
		`request from that date on, where the classic API only announces the date)`
	wUnknownVersion = `version_data.versions: a request naming a version that is not listed is answered 404 instead of 403 ` +
		`(same message, "This API version does not seem to exist")`
	wExpiredV2 = `version_data.versions["v2"].expires: "2001-01-01 00:00": once the version has expired, its requests are ` +
		`refused with 403 "API has expired, please check documentation or contact administrator" instead of 403 ` +
		`"Api Version has expired, please check documentation or contact administrator"`
	wValidateMessage = `version_data.versions["Default"].extended_paths.validate_json: POST /orders: a body the schema refuses ` +
		`is answered 422 with the OpenAPI validator's message ("request validation error: request body has an error: …") ` +
		`instead of the JSON schema validator's (e.g. "(root): name is required")`
	wValidateNoBody = `version_data.versions["Default"].extended_paths.validate_json: POST /orders: a request without a body, ` +
		`or whose body is not JSON, is answered 422 with the OpenAPI validator's message instead of 400 "JSON parsing error: …"`
	wValidateContentType = `version_data.versions["Default"].extended_paths.validate_json: POST /orders: a JSON body is ` +
		`validated only when the request's Content-Type is application/json; any other Content-Type is answered 422 where ` +
		`classic validated the body`
	wEmptyPathHeaders = `version_data.versions["Default"].extended_paths.transform_headers: GET entry with an empty path: it is ` +
		`the operation GET /, which matches every path as the empty path does, unless the gateway sets ` +
		`http_server_options.enable_path_suffix_matching (then it matches only paths that end in /)`
)

// versioned makes d a header-versioned API (x-api-version) with versions v1 and v2.
func versioned(d map[string]any, defaultVersion string, fallback bool, v2 map[string]any) {
	d["definition"] = map[string]any{"location": "header", "key": "x-api-version", "fallback_to_default": fallback}
	v2["name"] = "v2"
	d["version_data"] = map[string]any{"not_versioned": false, "default_version": defaultVersion,
		"versions": map[string]any{"v1": map[string]any{"name": "v1"}, "v2": v2}}
}

// defaultVersion sets the Default version of a not-versioned API.
func defaultVersion(d map[string]any, v map[string]any) {
	v["name"], v["use_extended_paths"] = "Default", true
	d["version_data"] = map[string]any{"not_versioned": true, "versions": map[string]any{"Default": v}}
}

func TestBehaviourChanges(t *testing.T) {
	for _, c := range []struct {
		name     string
		mutate   func(d map[string]any)
		doc      int            // 0: the base, i: the i-th version document
		want     map[string]any // flattened keys of that document ("<nil>": absent)
		warnings []string
		failure  string // a word of the failure, when the API must fail
	}{
		// class 1: a not-versioned API's Default expires only sends X-Tyk-Api-Expires (until the date).
		{name: "class 1: Default expires in the future", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"expires": "3000-01-02 15:04"})
		}, want: map[string]any{x + "info.expiration": "<nil>"}, warnings: []string{wExpiresHeader}},
		{name: "class 1: Default expired (classic no longer sends the header)", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"expires": "2001-01-01 00:00"})
		}, want: map[string]any{x + "info.expiration": "<nil>"}},
		{name: "class 1: the API-level expiration sends the header in both", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"expires": "3000-01-02 15:04"})
			d["expiration"] = "3001-01-01 00:00"
		}, want: map[string]any{x + "info.expiration": "3001-01-01 00:00"}},
		// class 2: a request naming an unknown version: 403 in classic, 404 from a Tyk OAS base.
		{name: "class 2: unknown version, no fallback", mutate: func(d map[string]any) {
			versioned(d, "v1", false, map[string]any{})
		}, want: map[string]any{x + "info.versioning.default": "self", x + "info.versioning.fallbackToDefault": "<nil>"},
			warnings: []string{wUnknownVersion}},
		{name: "class 2: fallback to an existing default keeps the answer", mutate: func(d map[string]any) {
			versioned(d, "v1", true, map[string]any{})
		}, want: map[string]any{x + "info.versioning.default": "self", x + "info.versioning.fallbackToDefault": true}},
		{name: "class 2: fallback to a default that names no version is not written (the gateway would answer 500)",
			mutate: func(d map[string]any) { versioned(d, "nosuch", true, map[string]any{}) },
			want:   map[string]any{x + "info.versioning.default": "", x + "info.versioning.fallbackToDefault": "<nil>"},
			warnings: []string{wUnknownVersion, `version_data.default_version: "nosuch" names no version: a request naming ` +
				`no version is refused with 403 "Version information not found" instead of 403 "This API version does not seem to exist"`}},
		// class 3: an expired version answers APIExpired instead of VersionExpired.
		{name: "class 3: expired version", mutate: func(d map[string]any) {
			versioned(d, "v1", true, map[string]any{"expires": "2001-01-01 00:00"})
		}, doc: 1, want: map[string]any{x + "info.expiration": "2001-01-01 00:00"}, warnings: []string{wExpiredV2}},
		{name: "class 3: API-level expiration no longer sent by a version that expires earlier", mutate: func(d map[string]any) {
			versioned(d, "v1", true, map[string]any{"expires": "2001-01-01 00:00"})
			d["version_data"].(map[string]any)["versions"].(map[string]any)["v1"].(map[string]any)["expires"] = "2002-01-01 00:00"
			d["expiration"] = "2002-01-01 00:00"
		}, doc: 1, want: map[string]any{x + "info.expiration": "2001-01-01 00:00"}, warnings: []string{
			`version_data.versions["v1"].expires: "2002-01-01 00:00": once the version has expired, its requests are refused with ` +
				`403 "API has expired, please check documentation or contact administrator" instead of 403 "Api Version has ` +
				`expired, please check documentation or contact administrator"`,
			`expiration: "2002-01-01 00:00": the X-Tyk-Api-Expires response header of version "v2" carries the version's ` +
				`expires ("2001-01-01 00:00") instead of the API's expiration`,
			wExpiredV2}},
		{name: "versioned: the API-level expiration refuses nothing in classic, so it is not carried over", mutate: func(d map[string]any) {
			versioned(d, "v1", true, map[string]any{})
			d["expiration"] = "2001-01-01 00:00"
		}, want: map[string]any{x + "info.expiration": "<nil>"}, warnings: []string{
			`expiration: "2001-01-01 00:00": the X-Tyk-Api-Expires response header is no longer sent for version "v1" (classic ` +
				`sends the API's expiration, which never refuses requests of a versioned API)`,
			`expiration: "2001-01-01 00:00": the X-Tyk-Api-Expires response header is no longer sent for version "v2" (classic ` +
				`sends the API's expiration, which never refuses requests of a versioned API)`}},
		// classes 4 and 5: validate_json runs as validateRequest, with a required body.
		{name: "class 4, 5: validate_json", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"validate_json": []any{map[string]any{
				"path": "/orders", "method": "POST", "schema": map[string]any{"type": "object", "required": []any{"name"}}}}}})
		}, want: map[string]any{
			"paths./orders.post.requestBody.required":                                   true,
			"paths./orders.post.requestBody.content.application/json.schema.required.0": "name",
			x + "middleware.operations.ordersPOST.validateRequest.enabled":              true,
		}, warnings: []string{wValidateMessage, wValidateNoBody, wValidateContentType}},
		{name: "class 4, 5: a disabled validate_json validates nothing in either", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"validate_json": []any{map[string]any{
				"disabled": true, "path": "/orders", "method": "POST", "schema": map[string]any{"type": "object"}}}}})
		}, want: map[string]any{x + "middleware.operations.ordersPOST.validateRequest.enabled": false}},
		// error_overrides: Tyk's OAS form (x-tyk-api-gateway.errorOverrides).
		{name: "error_overrides", mutate: func(d map[string]any) {
			d["error_overrides"] = map[string]any{"500": []any{map[string]any{
				"match":    map[string]any{"body_field": "error.type", "body_value": "database_timeout", "message_pattern": "Connection.*lost"},
				"response": map[string]any{"status_code": 501, "body": `{"status":"override"}`, "headers": map[string]any{"X-Override-Applied": "true"}},
			}}, "4xx": []any{map[string]any{"match": map[string]any{"flag": "AMF"}, "response": map[string]any{"status_code": 401, "message": "no", "template": "error_401"}}}}
		}, want: map[string]any{
			x + "errorOverrides.enabled":                                         true,
			x + "errorOverrides.value.500.0.match.bodyField":                     "error.type",
			x + "errorOverrides.value.500.0.match.bodyValue":                     "database_timeout",
			x + "errorOverrides.value.500.0.match.messagePattern":                "Connection.*lost",
			x + "errorOverrides.value.500.0.response.statusCode":                 json.Number("501"),
			x + "errorOverrides.value.500.0.response.body":                       `{"status":"override"}`,
			x + "errorOverrides.value.500.0.response.headers.X-Override-Applied": "true",
			x + "errorOverrides.value.4xx.0.match.flag":                          "AMF",
			x + "errorOverrides.value.4xx.0.response.statusCode":                 json.Number("401"),
			x + "errorOverrides.value.4xx.0.response.message":                    "no",
			x + "errorOverrides.value.4xx.0.response.template":                   "error_401",
		}},
		{name: "error_overrides switched off stay, switched off", mutate: func(d map[string]any) {
			d["error_overrides"] = map[string]any{"403": []any{map[string]any{"response": map[string]any{"status_code": 418}}}}
			d["error_overrides_disabled"] = true
		}, want: map[string]any{x + "errorOverrides.enabled": false, x + "errorOverrides.value.403.0.response.statusCode": json.Number("418")}},
		{name: "error_overrides that are not a map of lists fail", mutate: func(d map[string]any) {
			d["error_overrides"] = []any{"500"}
		}, failure: "error_overrides"},
		{name: "no error_overrides, no block", want: map[string]any{x + "errorOverrides": "<nil>"}},
		// use_extended_paths false: the gateway ignores extended_paths; the migrated API applies them.
		{name: "extended_paths of a version that does not use them", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"transform_headers": []any{
				map[string]any{"path": "/a", "method": "GET", "add_headers": map[string]any{"X-A": "1"}}}}})
			d["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["use_extended_paths"] = false
		}, want: map[string]any{x + "middleware.operations.aGET.transformRequestHeaders.enabled": true}, warnings: []string{
			`version_data.versions["Default"].use_extended_paths: false: the classic gateway ignores this version's extended_paths ` +
				`(1 entries), the migrated API applies them`}},
		// an empty-path transform entry matches every path: the operation "/" when that keeps the gateway's choice.
		{name: "empty path transform_headers", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"transform_headers": []any{
				map[string]any{"path": "/a", "method": "GET", "add_headers": map[string]any{"X-A": "1"}},
				map[string]any{"path": "", "method": "GET", "add_headers": map[string]any{"X-All": "1"}},
				map[string]any{"path": "", "method": "POST", "add_headers": map[string]any{"X-Post": "1"}, "disabled": true},
			}}})
		}, want: map[string]any{
			x + "middleware.operations.GET.transformRequestHeaders.add.0.name":  "X-All",
			x + "middleware.operations.aGET.transformRequestHeaders.add.0.name": "X-A",
			x + "middleware.operations.POST.transformRequestHeaders.enabled":    false,
			"paths./.get.operationId": "GET",
		}, warnings: []string{wEmptyPathHeaders, strings.ReplaceAll(wEmptyPathHeaders, "GET", "POST")}},
		{name: "empty path transform_response with a template", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"transform_response": []any{
				map[string]any{"path": "", "method": "GET", "template_data": map[string]any{"input_type": "json",
					"template_mode": "blob", "template_source": "e30=", "enable_session": true}},
			}}})
		}, want: map[string]any{x + "middleware.operations.GET.transformResponseBody.enabled": true},
			warnings: []string{strings.ReplaceAll(wEmptyPathHeaders, "transform_headers", "transform_response")}},
		// a slug with versioning by url: classic skips a leading /<slug> segment before the version, OAS has no slug
		{name: "slug with versioning by url", mutate: func(d map[string]any) {
			versioned(d, "v1", true, map[string]any{})
			d["definition"].(map[string]any)["location"] = "url"
			d["slug"] = "pets"
		}, want: map[string]any{x + "server.slug": "pets", x + "info.versioning.location": "url"}, warnings: []string{
			`slug: "pets" with versioning by url: the classic gateway skips a leading /pets segment before reading the version, ` +
				`the migrated API reads the version from that segment`}},
		{name: "slug with versioning by header: nothing to warn", mutate: func(d map[string]any) {
			versioned(d, "v1", true, map[string]any{})
			d["slug"] = "pets"
		}, want: map[string]any{x + "server.slug": "pets"}},
		{name: "template without the session (enable_session false): the migrated template reads it", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{
				"transform": []any{map[string]any{"path": "/t", "method": "POST", "template_data": map[string]any{"input_type": "json",
					"template_mode": "blob", "template_source": "e30=", "enable_session": false}}},
				"transform_response": []any{
					map[string]any{"path": "/t", "method": "GET", "template_data": map[string]any{"input_type": "json",
						"template_mode": "blob", "template_source": "e30=", "enable_session": true}},
					map[string]any{"path": "/u", "method": "GET", "disabled": true, "template_data": map[string]any{"input_type": "json",
						"template_mode": "blob", "template_source": "e30="}},
				},
			}})
		}, want: map[string]any{x + "middleware.operations.tPOST.transformRequestBody.enabled": true},
			warnings: []string{`version_data.versions["Default"].extended_paths.transform: POST /t: template_data.enable_session false: ` +
				`the migrated template always receives the session's metadata (._tyk_meta), as a Tyk OAS body transformation has no such switch`}},
		{name: "empty paths in url_rewrites and hard_timeouts (every per-method list) convert like the transform lists", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{
				"url_rewrites": []any{map[string]any{"path": "", "method": "GET", "match_pattern": "(.*)", "rewrite_to": "/v2$1"}},
				"hard_timeouts": []any{
					map[string]any{"path": "/slow", "method": "POST", "timeout": 30},
					map[string]any{"path": "", "method": "POST", "timeout": 5},
				},
			}})
		}, want: map[string]any{
			x + "middleware.operations.GET.urlRewrite.rewriteTo":      "/v2$1",
			x + "middleware.operations.POST.enforceTimeout.value":     json.Number("5"),
			x + "middleware.operations.slowPOST.enforceTimeout.value": json.Number("30"),
			"paths./.get.operationId":                                 "GET",
			"paths./.post.operationId":                                "POST",
		}, warnings: []string{strings.ReplaceAll(strings.ReplaceAll(wEmptyPathHeaders, "transform_headers", "hard_timeouts"), "GET", "POST"),
			strings.ReplaceAll(wEmptyPathHeaders, "transform_headers", "url_rewrites")}},
		{name: "a regular expression segment is matched as any one segment: warned; {name:regex} and allow are not", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{
				"url_rewrites": []any{map[string]any{"path": "/old/[0-9]+", "method": "GET", "match_pattern": "/old/([0-9]+)", "rewrite_to": "/new/$1"}},
				"track_endpoints": []any{map[string]any{"path": "/users/{id:[0-9]+}", "method": "GET"},
					map[string]any{"path": "/off/.*", "method": "GET", "disabled": true}},
				"white_list": []any{map[string]any{"path": "/old/[0-9]+", "method": "GET"}},
			}})
		}, want: map[string]any{
			x + "middleware.operations.old/[0-9]+GET.urlRewrite.pattern": "/old/([0-9]+)",
			"paths./old/{customRegex1}.get.operationId":                  "old/[0-9]+GET",
		}, warnings: []string{`version_data.versions["Default"].extended_paths.url_rewrites: GET /old/[0-9]+: the migrated API ` +
			"matches this path as /old/{customRegex1}, any one segment for each {parameter}, where classic matched the " +
			"regular expression: the entry applies to other requests than in classic"}},
		{name: "an empty path in hard_timeouts before another entry of its method still fails", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"hard_timeouts": []any{
				map[string]any{"path": "", "method": "GET", "timeout": 5},
				map[string]any{"path": "/a", "method": "GET", "timeout": 30},
			}}})
		}, failure: "hard_timeouts: GET entry has an empty path"},
		{name: "empty path shadowing a later entry of its method fails", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"transform_headers": []any{
				map[string]any{"path": "", "method": "GET", "add_headers": map[string]any{"X-All": "1"}},
				map[string]any{"path": "/a", "method": "GET", "add_headers": map[string]any{"X-A": "1"}},
			}}})
		}, failure: "empty path"},
		{name: "empty path beside a / entry of its method fails", mutate: func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"transform_response_headers": []any{
				map[string]any{"path": "/", "method": "GET", "add_headers": map[string]any{"X-Root": "1"}},
				map[string]any{"path": "", "method": "GET", "add_headers": map[string]any{"X-All": "1"}},
			}}})
		}, failure: "empty path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			def := classicDef("b22-1", "Behaviour", "/behaviour/")
			if c.mutate != nil {
				c.mutate(def)
			}
			res, err := convertDef(t, def, Options{})
			if c.failure != "" {
				var f *Failure
				if !errors.As(err, &f) || !strings.Contains(strings.Join(f.Messages, " | "), c.failure) {
					t.Fatalf("want a failure naming %q, got %v", c.failure, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			docs := [][]byte{res.Base.JSON}
			for _, v := range res.Versions {
				docs = append(docs, v.JSON)
			}
			for i, d := range docs {
				expectValidDocument(t, "document "+string(rune('0'+i)), d)
			}
			got := flatten(decodeJSON(t, docs[c.doc]), false)
			if bad := matchFlat(c.want, got); len(bad) > 0 {
				t.Errorf("%d keys differ:\n  %s\ndocument: %s", len(bad), strings.Join(bad, "\n  "), docs[c.doc])
			}
			if !slices.Equal(res.Warnings, c.warnings) {
				t.Errorf("warnings:\n  got  %q\n  want %q", res.Warnings, c.warnings)
			}
		})
	}
}
