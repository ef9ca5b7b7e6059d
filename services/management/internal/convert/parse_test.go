package convert

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestParseAnswersAsClassifyAndConvert checks the decode-once path against
// the two separate calls it replaces.
func TestParseAnswersAsClassifyAndConvert(t *testing.T) {
	for _, in := range []string{
		`{"api_id":"a"}`,
		`{"is_oas":true}`,
		`{"graphql":{"enabled":true}}`,
		`{"protocol":"tcp","listen_port":7000}`,
		`{"graphql":{"enabled":true},"active":"not a bool"}`, // the full decoding fails; the head still says GraphQL
		`{"active":"not a bool"}`,
		`[1]`,
	} {
		key, err := Parse([]byte(in)).SkipKey()
		wantKey, classifyErr := Classify([]byte(in))
		_, convertErr := Convert([]byte(in), Options{})
		var f *Failure
		switch {
		case wantKey != "":
			if key != wantKey || err != nil {
				t.Errorf("Parse(%s).SkipKey() = %q, %v; want %q", in, key, err, wantKey)
			}
		case classifyErr != nil || errors.As(convertErr, &f) && strings.Contains(f.Messages[0], "not a valid classic"):
			if !errors.As(err, &f) || key != "" {
				t.Errorf("Parse(%s).SkipKey() = %q, %v; want a *Failure", in, key, err)
			}
		default:
			if key != "" || err != nil {
				t.Errorf("Parse(%s).SkipKey() = %q, %v; want no key, no error", in, key, err)
			}
		}
	}

	raw := mustMarshal(t, versionedDef())
	want, err := Convert(raw, Options{DBID: "0123456789abcdef01234567"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(raw).Convert(Options{DBID: "0123456789abcdef01234567"})
	if err != nil || !bytes.Equal(got.Base.JSON, want.Base.JSON) || len(got.Versions) != len(want.Versions) {
		t.Fatalf("Parse.Convert differs from Convert: %v", err)
	}
}

func versionedDef() map[string]any {
	def := classicDef("v1234", "Versioned #shop", "/shop/")
	def["definition"] = map[string]any{"location": "header", "key": "x-api-version"}
	def["version_data"] = map[string]any{"not_versioned": false, "default_version": "v1",
		"versions": map[string]any{"v1": map[string]any{"name": "v1"}, "v2": map[string]any{"name": "v2"}}}
	return def
}

func TestVersionDBID(t *testing.T) {
	raw := mustMarshal(t, versionedDef())
	plain, err := Convert(raw, Options{DBID: "0123456789abcdef01234567"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Versions) != 1 || plain.Versions[0].DBID != "" || bytes.Contains(plain.Versions[0].JSON, []byte(`"dbId"`)) {
		t.Fatalf("without VersionDBID a child carries a db id: %s", plain.Versions[0].JSON)
	}
	var asked []string
	res, err := Convert(raw, Options{DBID: "0123456789abcdef01234567", Staging: true,
		VersionDBID: func(id string) string { asked = append(asked, id); return "89abcdef0123456789abcdef" }})
	if err != nil {
		t.Fatal(err)
	}
	child := res.Versions[0]
	if child.DBID != "89abcdef0123456789abcdef" || !bytes.Contains(child.JSON, []byte(`"dbId":"89abcdef0123456789abcdef"`)) {
		t.Errorf("child db id = %q, document %s", child.DBID, child.JSON)
	}
	if res.Base.DBID != "0123456789abcdef01234567" {
		t.Errorf("base db id = %q", res.Base.DBID)
	}
	if len(asked) != 1 || asked[0] != ChildID("v1234", "v2") {
		t.Errorf("VersionDBID asked for %q, want [%s]", asked, ChildID("v1234", "v2"))
	}
}
