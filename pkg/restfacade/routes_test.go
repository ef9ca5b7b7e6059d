package restfacade

import (
	"slices"
	"strings"
	"testing"
)

func TestAllowedMethods(t *testing.T) {
	doc := []byte(`{"paths":{"/api/things":{"get":{},"post":{}},"/api/things/{id}":{"get":{},"delete":{}},"/api/things/{id}/parts":{"put":{}}}}`)
	rs, err := parseRoutes(doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{"/api/things", []string{"GET", "HEAD", "POST"}},
		{"/api/things/7", []string{"DELETE", "GET", "HEAD"}},
		{"/api/things/7/parts", []string{"PUT"}},
		{"/api/things//parts", nil},
		{"/api/other", nil},
	}
	for _, tt := range tests {
		if got := rs.allowed(tt.path); !slices.Equal(got, tt.want) {
			t.Errorf("allowed(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
	if _, err := parseRoutes([]byte("not json")); err == nil {
		t.Error("parseRoutes accepted a broken description")
	}
}

func TestRoutePattern(t *testing.T) {
	doc := []byte(`{"paths":{"/api/things/{id}":{"get":{},"delete":{}},"/api/things/search":{"get":{}},"/api/things/{id}/parts":{"put":{}}}}`)
	rs, err := parseRoutes(doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ method, path, want string }{
		{"GET", "/api/things/7", "/api/things/{id}"},
		{"DELETE", "/api/things/abc", "/api/things/{id}"},
		{"GET", "/api/things/search", "/api/things/search"}, // the literal wins
		{"DELETE", "/api/things/search", "/api/things/{id}"},
		{"PUT", "/api/things/7/parts", "/api/things/{id}/parts"},
		{"POST", "/api/things/7", ""},
		{"GET", "/api/nothing", ""},
	}
	for _, tt := range tests {
		if got := rs.pattern(tt.method, tt.path); got != tt.want {
			t.Errorf("pattern(%s %s) = %q, want %q", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestIntegerQueryParameters(t *testing.T) {
	doc := []byte(`{"paths":{"/api/things":{"get":{"parameters":[
		{"name":"page","in":"query","type":"string","format":"int64"},
		{"name":"size","in":"query","type":"integer","format":"int32"},
		{"name":"category","in":"query","type":"string"},
		{"name":"body","in":"body"}]},"post":{}}}}`)
	rs, err := parseRoutes(doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		want         []string
	}{
		{"GET", "/api/things", []string{"page", "size"}},
		{"HEAD", "/api/things", []string{"page", "size"}},
		{"POST", "/api/things", nil},
		{"GET", "/api/other", nil},
	}
	for _, tt := range tests {
		if got := rs.intQuery(tt.method, tt.path); !slices.Equal(got, tt.want) {
			t.Errorf("intQuery(%s %s) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

// TestMatchesPath: a route matches a path read in place exactly when it
// matches the path's segments split apart.
func TestMatchesPath(t *testing.T) {
	rs, err := parseRoutes([]byte(`{"paths":{"/api/things/{id}":{"get":{}},"/api/things/search":{"get":{}},"/api/things/{id}/parts/{part}":{"put":{}},"/":{"get":{}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "", "/api", "/api/things", "/api/things/", "/api/things/7", "/api/things//", "/api/things/search",
		"/api/things/7/parts/1", "/api/things/7/parts/", "/api/things//parts/1", "//api/things/7", "/api/things/7/parts/1/x", "/x/things/7"} {
		trimmed := strings.Trim(path, "/")
		for _, r := range rs {
			if want := r.matches(strings.Split(trimmed, "/")); r.matchesPath(trimmed) != want {
				t.Errorf("%s on %q: matchesPath %v, want %v", r.pattern, path, !want, want)
			}
		}
	}
}
