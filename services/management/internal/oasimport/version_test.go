package oasimport

import (
	"errors"
	"testing"
)

// TestAddVersion restates Tyk's ConfigureVersionDefinition on a base API:
// Tyk's defaults for what is unset, the base's settings kept, the default
// moved only with SetDefault.
func TestAddVersion(t *testing.T) {
	base := `{"openapi":"3.0.3","x-tyk-api-gateway":{"info":{"id":"b","name":"B"}}}`
	out, err := AddVersion([]byte(base), Version{BaseName: "v1", Name: "v2"}, "c2")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"default":"self","enabled":true,"key":"x-api-version","location":"header","name":"v1","versions":[{"id":"c2","name":"v2"}]}`
	if got := asJSON(get(ext(t, out), "info", "versioning")); got != want {
		t.Errorf("first version:\n%s\nwant\n%s", got, want)
	}
	if VersionName(out) != "v1" || VersionName([]byte(base)) != "" {
		t.Errorf("VersionName: %q, %q", VersionName(out), VersionName([]byte(base)))
	}
	kept := `{"x-tyk-api-gateway":{"info":{"versioning":{"enabled":false,"name":"one","default":"one","location":"url-param","key":"ver",` +
		`"versions":[{"name":"two","id":"c2"}]}}}}`
	out, err = AddVersion([]byte(kept), Version{Name: "three", SetDefault: true}, "c3")
	if err != nil {
		t.Fatal(err)
	}
	want = `{"default":"three","enabled":true,"key":"ver","location":"url-param","name":"one","versions":[{"id":"c2","name":"two"},{"id":"c3","name":"three"}]}`
	if got := asJSON(get(ext(t, out), "info", "versioning")); got != want {
		t.Errorf("next version:\n%s\nwant\n%s", got, want)
	}
	var bad *Error
	if _, err := AddVersion([]byte(kept), Version{Name: "two"}, "c4"); !errors.As(err, &bad) {
		t.Errorf("a listed name: %v, want a refusal", err)
	}
	if _, err := AddVersion([]byte(`{"openapi":"3.0.3"}`), Version{Name: "x"}, "c"); !errors.As(err, &bad) {
		t.Errorf("a base without the extension: %v, want a refusal", err)
	}
}
