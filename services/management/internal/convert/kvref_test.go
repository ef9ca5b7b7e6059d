package convert

import (
	"encoding/json"
	"testing"
)

// TestKVReferences: a listen path or target that is a KV reference (the gateway resolves env://, secrets://,
// consul:// and vault:// when it loads any definition, classic or Tyk OAS) converts unchanged, as Tyk's
// converter converts it, and derives back unchanged.
func TestKVReferences(t *testing.T) {
	for _, c := range []struct{ listen, target string }{
		{"secrets://orders-path", "http://upstream.test/"},
		{"env://LISTEN_PATH", "env://TARGET_URL"},
		{"consul://orders/listen", "consul://orders/target"},
		{"vault://orders.listen", "vault://orders.target"},
	} {
		t.Run(c.listen, func(t *testing.T) {
			def := classicDef("kv-1", "KV", "/unused/")
			def["proxy"] = map[string]any{"listen_path": c.listen, "target_url": c.target, "strip_listen_path": true}
			res, err := convertDef(t, def, Options{})
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			expectValidDocument(t, "the converted document", res.Base.JSON)
			var doc any
			if err := json.Unmarshal(res.Base.JSON, &doc); err != nil {
				t.Fatal(err)
			}
			if lp := lookupPath(doc, "x-tyk-api-gateway", "server", "listenPath", "value"); lp != c.listen {
				t.Errorf("listenPath.value %v, want %q", lp, c.listen)
			}
			if u := lookupPath(doc, "x-tyk-api-gateway", "upstream", "url"); u != c.target {
				t.Errorf("upstream.url %v, want %q", u, c.target)
			}
			back, err := ToClassic(res.Base.JSON)
			if err != nil {
				t.Fatal(err)
			}
			var api classicAPI
			if err := json.Unmarshal(back, &api); err != nil {
				t.Fatal(err)
			}
			if api.Proxy.ListenPath != c.listen || api.Proxy.TargetURL != c.target {
				t.Errorf("derived back: listen_path %q, target_url %q", api.Proxy.ListenPath, api.Proxy.TargetURL)
			}
		})
	}
	// a listen path that is neither a path nor a reference is still refused
	def := classicDef("kv-2", "KV", "/unused/")
	def["proxy"] = map[string]any{"listen_path": "orders/", "target_url": "http://upstream.test/"}
	if res, err := convertDef(t, def, Options{}); err == nil {
		t.Errorf("listen path orders/ converted: %s", res.Base.JSON)
	}
}
