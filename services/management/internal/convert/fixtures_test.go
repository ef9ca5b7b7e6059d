package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Tyk's own classic → OAS expectations, restated as the project's table (fixturecases_test.go) and run
// against Convert with the classic API built as the contract suite builds it (shared/contract/README.md,
// "How the case's classic API is built"), compared on flattened keys as the suite compares them. When the
// shared reference folder is present, TestSharedFixturesMatchTable also checks that the table still says
// what Tyk's fixture files say.

// fixtureExpectation is one classic case: a partial classic definition and the flattened keys expected of
// the base document (absent: the key and everything below it is missing; empty: absent or empty).
type fixtureExpectation struct {
	name, desc  string
	wantFailure bool
	input       string // JSON
	want        []flatKey
}

type flatKey struct {
	path  string
	value any
}

// absent and empty are the table's markers for "no such key" and "absent or an empty object or array".
var (
	absent = absentKey{}
	empty  = emptyContainer{}
)

type absentKey struct{}

// wantMap turns a table entry's keys into the form matchFlat compares: numbers as JSON numbers.
func (e fixtureExpectation) wantMap() map[string]any {
	out := make(map[string]any, len(e.want))
	for _, k := range e.want {
		switch v := k.value.(type) {
		case absentKey:
			out[k.path] = "<nil>"
		case int:
			out[k.path] = json.Number(strconv.Itoa(v))
		case float64:
			out[k.path] = json.Number(strconv.FormatFloat(v, 'f', -1, 64))
		default:
			out[k.path] = v
		}
	}
	return out
}

func TestTykFixtures(t *testing.T) {
	for _, e := range tykClassicCases {
		t.Run(e.name, func(t *testing.T) {
			var input any
			if err := json.Unmarshal([]byte(e.input), &input); err != nil {
				t.Fatalf("input: %v", err)
			}
			runFixture(t, e.desc, toJSONValue(t, input), e.wantMap(), e.wantFailure)
		})
	}
}

// TestSharedFixturesMatchTable: every classic case of Tyk's fixture files (shared/reference/tyk/fixtures,
// optional) is in the table with the same input and expectations, and runs.
func TestSharedFixturesMatchTable(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "reference", "tyk", "fixtures")
	files, err := filepath.Glob(filepath.Join(dir, "*.yml"))
	if err != nil || len(files) == 0 {
		t.Skipf("no fixture files in %s", dir)
	}
	table := map[string]fixtureExpectation{}
	for _, e := range tykClassicCases {
		table[e.name] = e
	}
	seen := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var f fixtureFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".yml")
		for i, tc := range f.Tests {
			if tc.Source == "oas" {
				continue
			}
			seen++
			name := fmt.Sprintf("%s/%d", base, i)
			e, ok := table[name]
			if !ok {
				t.Errorf("%s (%q) is not in the table", name, tc.Desc)
				continue
			}
			var input any
			if err := json.Unmarshal([]byte(e.input), &input); err != nil {
				t.Fatalf("%s input: %v", name, err)
			}
			if !reflect.DeepEqual(toJSONValue(t, input), toJSONValue(t, tc.Input)) {
				t.Errorf("%s: the table's input differs from the fixture's", name)
			}
			want := flatten(toJSONValue(t, tc.Output), true)
			if got := e.wantMap(); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the table expects %v, the fixture %v", name, got, want)
			}
			if wantErr := tc.Errors.Enabled && tc.Errors.Want; wantErr != e.wantFailure {
				t.Errorf("%s: the table's wantFailure is %v, the fixture's %v", name, e.wantFailure, wantErr)
			}
			t.Run(name, func(t *testing.T) {
				runFixture(t, tc.Desc, toJSONValue(t, tc.Input), want, tc.Errors.Enabled && tc.Errors.Want)
			})
		}
	}
	if seen != len(tykClassicCases) {
		t.Errorf("the fixture files hold %d classic cases, the table %d", seen, len(tykClassicCases))
	}
}

type fixtureFile struct {
	Name  string        `yaml:"name"`
	Tests []fixtureCase `yaml:"tests"`
}

type fixtureCase struct {
	Desc   string `yaml:"desc"`
	Source string `yaml:"source"`
	Input  any    `yaml:"input"`
	Output any    `yaml:"output"`
	Errors struct {
		Enabled bool `yaml:"enabled"`
		Want    bool `yaml:"want"`
	} `yaml:"errors"`
}

func runFixture(t *testing.T, desc string, input any, want map[string]any, wantError bool) {
	const id = "f1x7ur3a0000000000000000000000aa"
	def := fixtureClassic(input, id, "Fixture "+id[:6], "/fixture-"+id[:8]+"/", wantError)
	res, err := Convert(mustMarshal(t, def), Options{DBID: "0123456789abcdef01234567"})
	if wantError {
		var f *Failure
		if !errors.As(err, &f) || len(f.Messages) == 0 {
			t.Fatalf("%q: want a Failure, got result %v, error %v", desc, res, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: %v", desc, err)
	}
	got := flatten(decodeJSON(t, res.Base.JSON), false)
	if bad := matchFlat(want, got); len(bad) > 0 {
		t.Errorf("%q: %d of %d expected keys differ:\n  %s\nbase: %s", desc, len(bad), len(want), strings.Join(bad, "\n  "), res.Base.JSON)
	}
	expectValidDocument(t, "baseAPI", res.Base.JSON)
	for _, v := range res.Versions {
		expectValidDocument(t, "version "+v.Name, v.JSON)
	}
}

// fixtureClassic builds the classic API of a case: a valid, keyless, not versioned API whose single
// version "v1" is the base, overlaid with the input, whose version "" (the base version in Tyk's harness)
// becomes "v1". Cases that expect an error have no listen path, as in Tyk's harness.
func fixtureClassic(in any, apiID, name, listen string, wantError bool) map[string]any {
	proxy := map[string]any{"target_url": "http://upstream.test/"}
	if !wantError {
		proxy["listen_path"] = listen
	}
	def := map[string]any{
		"api_id": apiID, "name": name, "use_keyless": true, "proxy": proxy,
		"version_data": map[string]any{"not_versioned": true, "versions": map[string]any{"v1": map[string]any{}}},
	}
	input, _ := in.(map[string]any)
	if vd, ok := input["version_data"].(map[string]any); ok {
		if vs, ok := vd["versions"].(map[string]any); ok {
			if b, ok := vs[""]; ok {
				delete(vs, "")
				vs["v1"] = b
			}
		}
	}
	mergeInto(def, input)
	return def
}

// mergeInto copies src into dst member by member, as decoding JSON into an existing Go map does.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// toJSONValue turns a YAML value into the value JSON decoding gives (numbers as json.Number).
func toJSONValue(t *testing.T, v any) any {
	return decodeJSON(t, mustMarshal(t, v))
}

// emptyContainer is an expected empty object or array.
type emptyContainer struct{}

// flatten maps each scalar to its dotted path; with keepEmpty, empty objects and arrays become emptyContainer.
func flatten(v any, keepEmpty bool) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		key := func(k string) string {
			if prefix == "" {
				return k
			}
			return prefix + "." + k
		}
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && keepEmpty && prefix != "" {
				out[prefix] = emptyContainer{}
			}
			for k, e := range x {
				walk(key(k), e)
			}
		case []any:
			if len(x) == 0 && keepEmpty && prefix != "" {
				out[prefix] = emptyContainer{}
			}
			for i, e := range x {
				walk(key(strconv.Itoa(i)), e)
			}
		default:
			out[prefix] = x
		}
	}
	walk("", v)
	return out
}

// matchFlat compares expectations with the flattened result: "<nil>" means neither the key nor anything
// below it exists, an expected empty container means absent or empty, numbers compare by value.
func matchFlat(want, got map[string]any) []string {
	var bad []string
	below := func(k string) string {
		for _, gk := range sortedKeys(got) {
			if strings.HasPrefix(gk, k+".") {
				return fmt.Sprintf("%s = %v", gk, got[gk])
			}
		}
		return ""
	}
	for _, k := range sortedKeys(want) {
		w := want[k]
		g, present := got[k]
		_, empty := w.(emptyContainer)
		switch {
		case empty || w == "<nil>":
			if present {
				bad = append(bad, fmt.Sprintf("%s: want absent or empty, got %v", k, g))
			} else if b := below(k); b != "" {
				bad = append(bad, fmt.Sprintf("%s: want absent or empty, got %s", k, b))
			}
		case !present:
			bad = append(bad, fmt.Sprintf("%s: want %v, absent", k, w))
		default:
			wn, wok := w.(json.Number)
			gn, gok := g.(json.Number)
			if wok && gok {
				if !sameNumber(wn, gn) {
					bad = append(bad, fmt.Sprintf("%s: want %v, got %v", k, w, g))
				}
			} else if w != g {
				bad = append(bad, fmt.Sprintf("%s: want %#v, got %#v", k, w, g))
			}
		}
	}
	return bad
}
