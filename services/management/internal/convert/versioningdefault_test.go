package convert

import "testing"

// TestVersioningDefault: only a default_version that names an existing version makes the base the default
// ("self"); otherwise requests that name no version stay refused (Tyk writes "" then too), never served by
// whichever version became the base.
func TestVersioningDefault(t *testing.T) {
	for _, tc := range []struct {
		name           string
		defaultVersion string
		versions       []string
		wantBase       string
		wantDefault    any // nil: no versioning block
	}{
		{"names an existing version", "v2", []string{"v1", "v2"}, "v2", "self"},
		{"names Default", "Default", []string{"Default", "v2"}, "Default", "self"},
		{"names nothing, Default exists", "v9", []string{"Default", "v2"}, "Default", ""},
		{"empty, Default exists", "", []string{"Default", "v2"}, "Default", ""},
		{"names nothing, no Default", "v9", []string{"v2", "v1"}, "v1", ""},
		{"empty, no Default", "", []string{"beta", "alpha"}, "alpha", ""},
		{"names nothing, one version", "v9", []string{"v1"}, "v1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := classicDef("vd-1", "Versioned", "/vd/")
			versions := map[string]any{}
			for _, v := range tc.versions {
				versions[v] = map[string]any{"name": v}
			}
			def["version_data"] = map[string]any{"not_versioned": false, "default_version": tc.defaultVersion, "versions": versions}
			def["definition"] = map[string]any{"location": "header", "key": "x-api-version"}
			res, err := convertDef(t, def, Options{})
			if err != nil {
				t.Fatal(err)
			}
			doc := decodeJSON(t, res.Base.JSON)
			vs, _ := lookupPath(doc, "x-tyk-api-gateway", "info", "versioning").(map[string]any)
			if got := lookupPath(doc, "info", "version"); got != tc.wantBase {
				t.Errorf("base version = %v, want %q", got, tc.wantBase)
			}
			got, present := vs["default"]
			if !present || got != tc.wantDefault {
				t.Errorf("versioning.default = %v (present %v), want %q written explicitly", got, present, tc.wantDefault)
			}
			if len(res.Versions) != len(tc.versions)-1 {
				t.Errorf("%d child versions, want %d", len(res.Versions), len(tc.versions)-1)
			}
		})
	}
}
