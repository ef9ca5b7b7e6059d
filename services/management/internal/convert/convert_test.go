package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden is what a golden file holds: the result, or the failure messages.
type golden struct {
	APIID      string            `json:"apiID,omitempty"`
	Name       string            `json:"name,omitempty"`
	Categories []string          `json:"categories,omitempty"`
	Base       json.RawMessage   `json:"base,omitempty"`
	Versions   []json.RawMessage `json:"versions,omitempty"`
	Failure    []string          `json:"failure,omitempty"`
	Warnings   []string          `json:"warnings,omitempty"`
}

// TestGolden converts every classic definition in testdata/*.json (those named staging-* in staging mode)
// and compares the result with testdata/golden/<name>.json; go test -update rewrites the golden files.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no classic definitions in testdata: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Staging: strings.HasPrefix(name, "staging-")}
			res, err := Convert(raw, opts)
			var g golden
			if err != nil {
				var f *Failure
				if !errors.As(err, &f) {
					t.Fatalf("Convert returned %T, want *Failure: %v", err, err)
				}
				g.Failure = f.Messages
			} else {
				g = golden{APIID: res.APIID, Name: res.Name, Categories: res.Categories, Base: res.Base.JSON, Warnings: res.Warnings}
				for _, v := range res.Versions {
					g.Versions = append(g.Versions, v.JSON)
				}
				expectValidDocument(t, "base", res.Base.JSON)
				for _, v := range res.Versions {
					expectValidDocument(t, "version "+v.Name, v.JSON)
				}
				again, err := Convert(raw, opts)
				if err != nil || !bytes.Equal(again.Base.JSON, res.Base.JSON) || len(again.Versions) != len(res.Versions) {
					t.Fatalf("a second conversion differs: %v", err)
				}
				for i := range res.Versions {
					if !bytes.Equal(again.Versions[i].JSON, res.Versions[i].JSON) {
						t.Fatalf("a second conversion of version %s differs", res.Versions[i].Name)
					}
				}
			}
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (run go test -update after checking the change):\n%s", name, path, got)
			}
		})
	}
}
