package convert

import (
	"encoding/json"
	"fmt"
	"testing"
)

// defWithPaths is classicDef with the Default version's extended_paths set.
func defWithPaths(t *testing.T, paths string) map[string]any {
	t.Helper()
	def := classicDef("regex-1", "Regex", "/regex/")
	var ep any
	if err := json.Unmarshal([]byte(paths), &ep); err != nil {
		t.Fatal(err)
	}
	def["version_data"].(map[string]any)["versions"].(map[string]any)["Default"].(map[string]any)["extended_paths"] = ep
	return def
}

// TestAllowListKeepsRegexBoundaries: an allow entry with a regular expression in its path admits in Tyk OAS
// only what the classic expression admitted, through an anchored pattern that validateRequest enforces.
func TestAllowListKeepsRegexBoundaries(t *testing.T) {
	for _, c := range []struct {
		path, template, param, pattern string
	}{
		{"/users/[0-9]+", "/users/{customRegex1}", "customRegex1", "^(?:[0-9]+)$"},
		{"/users/{id:[0-9]+}", "/users/{id}", "id", "^(?:[0-9]+)$"},
		{"/orgs/{org}/teams/[a-z]+", "/orgs/{org}/teams/{customRegex1}", "customRegex1", "^(?:[a-z]+)$"},
	} {
		t.Run(c.path, func(t *testing.T) {
			res, err := convertDef(t, defWithPaths(t, fmt.Sprintf(`{"white_list":[{"path":%q,"method":"GET"}]}`, c.path)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			json.Unmarshal(res.Base.JSON, &doc)
			opID, _ := lookupPath(doc, "paths", c.template, "get", "operationId").(string)
			op := lookupPath(doc, "x-tyk-api-gateway", "middleware", "operations", opID)
			if lookupPath(op, "allow", "enabled") != true {
				t.Fatalf("no allow operation for GET %s: %s", c.template, res.Base.JSON)
			}
			if v := lookupPath(op, "validateRequest"); fmt.Sprint(v) != "map[enabled:true errorResponseCode:403]" {
				t.Errorf("validateRequest = %v, want enabled with 403", v)
			}
			params, _ := lookupPath(doc, "paths", c.template, "parameters").([]any)
			found := false
			for _, p := range params {
				if lookupPath(p, "name") == c.param {
					found = true
					if got := lookupPath(p, "schema", "pattern"); got != c.pattern {
						t.Errorf("parameter %s pattern = %v, want %s", c.param, got, c.pattern)
					}
				}
			}
			if !found {
				t.Errorf("parameter %s not declared: %v", c.param, params)
			}
		})
	}
}

func TestLiteralAllowListNeedsNoValidation(t *testing.T) {
	res, err := convertDef(t, defWithPaths(t, `{"white_list":[{"path":"/users/{id}","method":"GET"}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	json.Unmarshal(res.Base.JSON, &doc)
	op := lookupPath(doc, "x-tyk-api-gateway", "middleware", "operations", "users/{id}GET")
	if lookupPath(op, "allow", "enabled") != true {
		t.Fatalf("no allow operation users/{id}GET: %s", res.Base.JSON)
	}
	if v := lookupPath(op, "validateRequest"); v != nil {
		t.Errorf("a path without regular expressions got validateRequest %v", v)
	}
}

func TestRegexPathsThatCannotStayClosedFail(t *testing.T) {
	for name, c := range map[string]struct {
		paths string
		words []string
	}{
		"ignored with a regex": {`{"ignored":[{"path":"/public/[0-9]+","method":"GET"}]}`, []string{"ignored", "/public/[0-9]+", "GET"}},
		"allow beside a disabled validate_json": {`{"white_list":[{"path":"/u/[0-9]+","method":"POST"}],
			"validate_json":[{"path":"/u/[0-9]+","method":"POST","schema":{"type":"object"},"disabled":true}]}`, []string{"white_list", "/u/[0-9]+", "validate_json"}},
	} {
		t.Run(name, func(t *testing.T) { expectFailure(t, defWithPaths(t, c.paths), c.words...) })
	}
}

// TestCollidingPathsFailWhenTheyDisagree: classic paths that become one Tyk OAS operation may not set one
// setting differently; equal settings merge, and a repeat of the same classic path replaces the earlier
// entry as Tyk does.
func TestCollidingPathsFailWhenTheyDisagree(t *testing.T) {
	expectFailure(t, defWithPaths(t, `{"url_rewrites":[
		{"path":"/a/[0-9]+","method":"GET","match_pattern":"/a/(.*)","rewrite_to":"/numbers/$1"},
		{"path":"/a/[a-z]+","method":"GET","match_pattern":"/a/(.*)","rewrite_to":"/letters/$1"}]}`),
		"url_rewrites", "/a/[0-9]+", "/a/[a-z]+", "urlRewrite")

	expectFailure(t, defWithPaths(t, `{"validate_json":[
		{"path":"/v/[0-9]+","method":"POST","schema":{"type":"object","required":["a"]}},
		{"path":"/v/[a-z]+","method":"POST","schema":{"type":"object","required":["b"]}}]}`),
		"validate_json", "/v/[0-9]+", "/v/[a-z]+", "request schema")

	for name, paths := range map[string]string{
		"equal settings":  `{"track_endpoints":[{"path":"/a/{id}","method":"PUT"},{"path":"/a/{id:[0-9]+}","method":"PUT"}]}`,
		"same path twice": `{"hard_timeouts":[{"path":"/t","method":"GET","timeout":5},{"path":"/t","method":"GET","timeout":9}]}`,
	} {
		res, err := convertDef(t, defWithPaths(t, paths), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "same path twice" {
			var doc any
			json.Unmarshal(res.Base.JSON, &doc)
			if v := lookupPath(doc, "x-tyk-api-gateway", "middleware", "operations", "tGET", "enforceTimeout", "value"); v != float64(9) {
				t.Errorf("same path twice: enforceTimeout.value = %v, want the later entry's 9", v)
			}
		}
	}
}

// TestToClassicRegexPathsAsExtractTo: a classic path holding a regular expression becomes an OpenAPI path with
// a parameter (/old/[0-9]+ → /old/{customRegex1}, its pattern in the parameter's schema). Tyk's OAS.ExtractTo
// writes every extended_paths entry of that operation, whatever the middleware kind, with the OpenAPI path,
// and a gateway matches each {parameter} segment as ([^/]+); the classic definition derived for gateways
// (ToClassic) must carry the same path, so a gateway loading the document (file mode) and one loading the
// derived classic (dashboard mode) match the same requests.
func TestToClassicRegexPathsAsExtractTo(t *testing.T) {
	for _, c := range []struct {
		name, classic string
		want          map[string]string // extended_paths list → the path of its one entry
	}{
		{"one regex segment, every kind", `{
			"white_list":[{"path":"/old/[0-9]+","method":"GET"}],
			"url_rewrites":[{"path":"/old/[0-9]+","method":"GET","match_pattern":"/old/([0-9]+)","rewrite_to":"/new/$1"}],
			"track_endpoints":[{"path":"/old/[0-9]+","method":"GET"}],
			"transform_headers":[{"path":"/old/[0-9]+","method":"GET","add_headers":{"X-A":"1"}}],
			"hard_timeouts":[{"path":"/old/[0-9]+","method":"GET","timeout":30}],
			"size_limits":[{"path":"/old/[0-9]+","method":"POST","size_limit":1024}],
			"method_transforms":[{"path":"/old/[0-9]+","method":"PUT","to_method":"POST"}],
			"internal":[{"path":"/old/[0-9]+","method":"PATCH"}],
			"do_not_track_endpoints":[{"path":"/old/[0-9]+","method":"DELETE"}]}`,
			map[string]string{"white_list": "/old/{customRegex1}",
				"url_rewrites": "/old/{customRegex1}", "track_endpoints": "/old/{customRegex1}",
				"transform_headers": "/old/{customRegex1}", "hard_timeouts": "/old/{customRegex1}",
				"size_limits": "/old/{customRegex1}", "method_transforms": "/old/{customRegex1}",
				"internal": "/old/{customRegex1}", "do_not_track_endpoints": "/old/{customRegex1}"}},
		{"two regex segments and a named parameter", `{
			"url_rewrites":[{"path":"/orgs/{org}/[a-z]+/[0-9]+","method":"GET","match_pattern":"/orgs/(.*)","rewrite_to":"/o/$1"}],
			"white_list":[{"path":"/orgs/{org}/[a-z]+/[0-9]+","method":"GET"}]}`,
			map[string]string{"url_rewrites": "/orgs/{org}/{customRegex1}/{customRegex2}",
				"white_list": "/orgs/{org}/{customRegex1}/{customRegex2}"}},
		{"a mux parameter with its own expression", `{
			"track_endpoints":[{"path":"/users/{id:[0-9]+}","method":"GET"}]}`,
			map[string]string{"track_endpoints": "/users/{id}"}},
		{"a literal path is unchanged", `{
			"track_endpoints":[{"path":"/plain","method":"GET"}]}`,
			map[string]string{"track_endpoints": "/plain"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := convertDef(t, defWithPaths(t, c.classic), Options{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := ToClassic(res.Base.JSON)
			if err != nil {
				t.Fatal(err)
			}
			var derived any
			if err := json.Unmarshal(out, &derived); err != nil {
				t.Fatal(err)
			}
			ep, _ := lookupPath(derived, "version_data", "versions", "", "extended_paths").(map[string]any)
			for list, want := range c.want {
				entries, _ := ep[list].([]any)
				if len(entries) != 1 {
					t.Errorf("%s: %d entries, want 1: %v", list, len(entries), entries)
					continue
				}
				if got := lookupPath(entries[0], "path"); got != want {
					t.Errorf("%s path = %v, want %s (Tyk's OAS.ExtractTo)", list, got, want)
				}
			}
			for list, entries := range ep {
				if _, ok := c.want[list]; !ok {
					if l, _ := entries.([]any); len(l) > 0 {
						t.Errorf("%s: unexpected entries %v", list, l)
					}
				}
			}
		})
	}
}
