package convert

import (
	"strings"
	"testing"
)

// TestLiteralPath: the paths templatePath keeps as they are (literalPath) are
// exactly those buildTemplate would give back unchanged, without parameters.
func TestLiteralPath(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		literal bool
	}{
		{"/orders", true},
		{"/orders/", true},
		{"/orders/v1.2/by-id_x", true},
		{"orders", false},   // no leading slash: templated to /orders
		{"//orders", false}, // an empty segment goes
		{"/a//b", false},
		{"/a/b//", false},
		{"/orders/{id}", false},
		{"/old/[0-9]+", false},
	} {
		if got := literalPath(tc.raw); got != tc.literal {
			t.Errorf("literalPath(%q) = %v, want %v", tc.raw, got, tc.literal)
		}
		checkLiteralPath(t, tc.raw)
	}
}

func checkLiteralPath(t *testing.T, raw string) {
	t.Helper()
	trimmed := strings.Trim(raw, "/")
	if trimmed == "" {
		return
	}
	built, err := buildTemplate(raw, trimmed)
	same := err == nil && built.path == raw && len(built.params) == 0
	if literalPath(raw) != same {
		t.Errorf("%q: literalPath %v, but buildTemplate gives %+v, %v", raw, literalPath(raw), built, err)
	}
}

func FuzzLiteralPath(f *testing.F) {
	for _, s := range []string{"/orders", "/orders/", "//x", "/a//b/", "/{id}", "/x/[0-9]+/", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(checkLiteralPath)
}
