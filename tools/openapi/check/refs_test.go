package check

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSelfReference: no definition refers into itself (swagger-cli crashed
// on the portal's v1IdList, and openapi-typescript refused it), and every
// local $ref resolves.
func TestNoSelfReference(t *testing.T) {
	for _, svc := range []string{"studio", "management", "portal"} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "..", "gen", "openapi", "files", "gatehouse", svc, "v1", svc+".swagger.json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(v any, where, def string)
		walk = func(v any, where, def string) {
			switch x := v.(type) {
			case map[string]any:
				if ref, ok := x["$ref"].(string); ok {
					if def != "" && (ref == "#/definitions/"+def || strings.HasPrefix(ref, "#/definitions/"+def+"/")) {
						t.Errorf("%s: %s refers into its own definition: %s", svc, where, ref)
					}
					if !resolves(doc, ref) {
						t.Errorf("%s: %s: $ref %s does not resolve", svc, where, ref)
					}
				}
				for k, e := range x {
					walk(e, where+"/"+k, def)
				}
			case []any:
				for _, e := range x {
					walk(e, where+"/[]", def)
				}
			}
		}
		walk(doc["paths"], "paths", "")
		for name, d := range doc["definitions"].(map[string]any) {
			walk(d, "definitions/"+name, name)
		}
	}
}

// resolves follows a local JSON pointer.
func resolves(doc map[string]any, ref string) bool {
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	var cur any = doc
	for _, tok := range strings.Split(p, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]; !ok {
			return false
		}
	}
	return true
}
