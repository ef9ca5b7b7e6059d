package store

import (
	"strings"
	"testing"
)

func TestPathProblem(t *testing.T) {
	for path, ok := range map[string]bool{
		"": true, "getting-started": true, "/guides/quick-start": true, "guides/v1.2/setup_notes": true,
		"guides/start/": true, "a": true, "/a.b/c": true, "..hidden": true, "v..2": true, strings.Repeat("a", 255): true,
		"../../portal-api/products": false, "guides/../x": false, "./x": false, "x/.": false, "/..": false, "..": false,
		"guides//x": false, "//evil.example/x": false, "/": false, "//": false,
		"javascript:alert(1)": false, "https://evil.example": false, "x?y": false, "x#y": false, `x\y`: false,
		"x%2e%2e": false, "x y": false, "über": false, "x\x00": false, strings.Repeat("a", 256): false,
	} {
		if got := PathProblem(path) == ""; got != ok {
			t.Errorf("PathProblem(%q) = %q; want valid %v", path, PathProblem(path), ok)
		}
	}
}
