package convert

import (
	"encoding/json"
	"testing"
)

// TestIssue29Classes: one case per class of issue 29, each with the exact classic input, the keys of the
// OAS output, and the classic fields a gateway acts on derived back from that output (ToClassic, which gives
// what Tyk's OAS.ExtractTo gives).
func TestIssue29Classes(t *testing.T) {
	for _, c := range []struct {
		name    string
		mutate  func(d map[string]any)
		oas     map[string]any // flattened keys of the converted document
		derived map[string]any // flattened keys of the classic definition derived back
	}{
		{"a template without the session reads it once migrated", func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"transform": []any{map[string]any{"path": "/t", "method": "POST",
				"template_data": map[string]any{"input_type": "json", "template_mode": "blob", "template_source": "e30=", "enable_session": false}}}}})
		}, map[string]any{x + "middleware.operations.tPOST.transformRequestBody.body": "e30="},
			map[string]any{"version_data.versions..extended_paths.transform.0.template_data.enable_session": true}},
		{"a KV reference listen path is kept", func(d map[string]any) {
			d["proxy"] = map[string]any{"listen_path": "secrets://orders-path", "target_url": "env://ORDERS_URL", "strip_listen_path": true}
		}, map[string]any{x + "server.listenPath.value": "secrets://orders-path", x + "upstream.url": "env://ORDERS_URL"},
			map[string]any{"proxy.listen_path": "secrets://orders-path", "proxy.target_url": "env://ORDERS_URL"}},
		{"an empty-path url_rewrites entry is the operation GET /", func(d map[string]any) {
			defaultVersion(d, map[string]any{"extended_paths": map[string]any{"url_rewrites": []any{
				map[string]any{"path": "", "method": "GET", "match_pattern": "(.*)", "rewrite_to": "/v2$1"}}}})
		}, map[string]any{x + "middleware.operations.GET.urlRewrite.rewriteTo": "/v2$1", "paths./.get.operationId": "GET"},
			map[string]any{"version_data.versions..extended_paths.url_rewrites.0.path": "/", "version_data.versions..extended_paths.url_rewrites.0.rewrite_to": "/v2$1"}},
		{"an IP allow list the gateway enforces stays enforced", func(d map[string]any) {
			d["allowed_ips"] = []any{"10.0.0.0/8"} // enable_ip_whitelisting absent: v5.11 applies the list all the same
		}, map[string]any{x + "server.ipAccessControl.enabled": true, x + "server.ipAccessControl.allow.0": "10.0.0.0/8"},
			map[string]any{"ip_access_control_disabled": false, "allowed_ips.0": "10.0.0.0/8"}},
		{"an inactive API stays inactive", func(d map[string]any) { d["active"] = false },
			map[string]any{x + "info.state.active": false}, map[string]any{"active": false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			def := classicDef("i29-1", "Issue 29", "/i29/")
			c.mutate(def)
			res, err := convertDef(t, def, Options{})
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if bad := matchFlat(c.oas, flatten(decodeJSON(t, res.Base.JSON), false)); len(bad) > 0 {
				t.Errorf("OAS output: %v\n%s", bad, res.Base.JSON)
			}
			back, err := ToClassic(res.Base.JSON)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(back, &v); err != nil {
				t.Fatal(err)
			}
			got := flatten(v, false)
			for k, want := range c.derived {
				if have, ok := got[k]; (ok || want != false) && have != want {
					t.Errorf("derived %s: %v, want %v", k, have, want)
				}
			}
		})
	}
}
