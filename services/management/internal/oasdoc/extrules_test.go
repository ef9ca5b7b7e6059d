package oasdoc

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The rule set of extrules.go, held to the same rules written as a JSON schema (draft-04) in
// testdata/x-tyk-api-gateway.schema.json: the file is written from the tables (go test -update) and checked
// by a standard JSON schema validator, which must agree with Check's walk on every document of a corpus and
// on every mutation of them. When the shared reference folder is present, the corpus is also held to Tyk's own
// schema.

const schemaFile = "x-tyk-api-gateway.schema.json"

// schemaNode is one location of the schema being written.
type schemaNode struct {
	props       map[string]*schemaNode
	any         *schemaNode // "*": every member and every item
	constraints []map[string]any
}

func (n *schemaNode) at(keys []string) *schemaNode {
	for _, k := range keys {
		if k == "*" {
			if n.any == nil {
				n.any = &schemaNode{}
			}
			n = n.any
			continue
		}
		if n.props == nil {
			n.props = map[string]*schemaNode{}
		}
		if n.props[k] == nil {
			n.props[k] = &schemaNode{}
		}
		n = n.props[k]
	}
	return n
}

func (n *schemaNode) schema() map[string]any {
	s := map[string]any{}
	if len(n.constraints) > 0 {
		all := make([]any, len(n.constraints))
		for i, c := range n.constraints {
			all[i] = c
		}
		s["allOf"] = all
	}
	if len(n.props) > 0 {
		props := map[string]any{}
		for k, c := range n.props {
			props[k] = c.schema()
		}
		s["properties"] = props
	}
	if n.any != nil {
		child := n.any.schema()
		s["patternProperties"] = map[string]any{".*": child}
		s["items"] = child
	}
	return s
}

// restatedSchema writes the rules of extrules.go as one JSON schema.
func restatedSchema() map[string]any {
	root, deep := &schemaNode{}, &schemaNode{}
	add := func(at string, c map[string]any) {
		l := parseLocation(at)
		if l.anyDepth {
			deep.at(l.keys).constraints = append(deep.at(l.keys).constraints, c)
			return
		}
		n := root.at(l.keys)
		n.constraints = append(n.constraints, c)
	}
	for _, r := range extRequired {
		add(r.at, map[string]any{"required": r.members})
	}
	for _, r := range extValues {
		add(r.at, r.check.schema)
	}
	for _, r := range extConditional {
		add(r.at, r.schema)
	}
	anyDepth := deep.schema()
	anyDepth["patternProperties"] = map[string]any{".*": map[string]any{"$ref": "#/definitions/anyDepth"}}
	anyDepth["items"] = map[string]any{"$ref": "#/definitions/anyDepth"}
	s := root.schema()
	s["$schema"] = "http://json-schema.org/draft-04/schema#"
	s["description"] = "The x-tyk-api-gateway rules Gatehouse checks (oasdoc/extrules.go), written by go test -update; not Tyk's schema file."
	s["type"] = "object"
	s["definitions"] = map[string]any{"anyDepth": anyDepth}
	s["allOf"] = append(asAnyList(s["allOf"]), map[string]any{"$ref": "#/definitions/anyDepth"})
	return s
}

func asAnyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func compileSchema(t testing.TB, name string, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4)
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRestatedSchemaIsCurrent: testdata's schema is the tables' (go test -update rewrites it).
func TestRestatedSchemaIsCurrent(t *testing.T) {
	got, err := json.MarshalIndent(restatedSchema(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", schemaFile)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not the tables' schema (run go test -update): %v", path, err)
	}
}

// corpus is the x-tyk-api-gateway of every document the tests have: the converter's golden documents and the
// export fixture.
func corpus(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}
	golden, _ := filepath.Glob(filepath.Join("..", "convert", "testdata", "golden", "*.json"))
	for _, f := range golden {
		var g struct {
			Base     json.RawMessage   `json:"base"`
			Versions []json.RawMessage `json:"versions"`
		}
		raw, err := os.ReadFile(f)
		if err != nil || json.Unmarshal(raw, &g) != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, d := range append([]json.RawMessage{g.Base}, g.Versions...) {
			if d != nil {
				out[filepath.Base(f)+"#"+string(rune('0'+i))] = extensionOf(t, d)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "export.json"))
	if err != nil {
		t.Fatal(err)
	}
	out["export.json"] = extensionOf(t, raw)
	if len(out) < 20 {
		t.Fatalf("the corpus has %d documents; the converter's golden files are missing", len(out))
	}
	return out
}

func extensionOf(t *testing.T, doc []byte) any {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	return d[Extension]
}

// mutations are x with one change each, those not in seen yet: every member removed, and every value
// replaced by values of other kinds and by edge values.
func mutations(x any, seen map[string]bool) []any {
	var out []any
	keep := func() {
		raw, _ := json.Marshal(x)
		if !seen[string(raw)] {
			seen[string(raw)] = true
			var c any
			_ = json.Unmarshal(raw, &c)
			out = append(out, c)
		}
	}
	var walk func(v any, set func(any), del func())
	walk = func(v any, set func(any), del func()) {
		for _, r := range []any{true, " ", -1.0, nil} {
			set(r)
			keep()
		}
		set(v)
		if del != nil {
			del()
			keep()
			set(v)
		}
		switch c := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(c)) {
				old := c[k]
				walk(old, func(n any) { c[k] = n }, func() { delete(c, k) })
				c[k] = old
			}
		case []any:
			for i := range c {
				old := c[i]
				walk(old, func(n any) { c[i] = n }, nil)
				c[i] = old
			}
		}
	}
	walk(x, func(any) {}, nil)
	return out
}

// TestCheckAgreesWithSchema: Check's walk and the schema in testdata give the same verdict on every document
// and mutation.
func TestCheckAgreesWithSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", schemaFile))
	if err != nil {
		t.Fatal(err)
	}
	schema := compileSchema(t, schemaFile, raw)
	n, refused := 0, 0
	seen := map[string]bool{}
	sample := 3 // a third of the mutations (all of them with a sample of 1), a tenth with -short
	if testing.Short() {
		sample = 10
	}
	for name, x := range corpus(t) {
		if p := checkExtensionRules(x); len(p) > 0 {
			t.Errorf("%s: the corpus document breaks the rules: %s", name, strings.Join(p, "; "))
		}
		for i, m := range mutations(x, seen) {
			if i%sample != 0 {
				continue
			}
			n++
			problems := checkExtensionRules(m)
			schemaErr := schema.Validate(m)
			if (len(problems) == 0) != (schemaErr == nil) {
				t.Fatalf("%s: Check says %q, the schema says %v, of\n%s", name, problems, schemaErr, mustJSON(m))
			}
			if len(problems) > 0 {
				refused++
			}
		}
	}
	t.Logf("%d mutations, %d refused by both", n, refused)
	if refused == 0 || refused == n {
		t.Errorf("%d of %d mutations refused: the comparison tells nothing", refused, n)
	}
}

// TestCorpusMeetsTykSchema: when the shared reference folder is present, every corpus document (each meeting
// the rules) also meets Tyk's own schema. The rules restate only part of that schema (the parts the converter
// writes), and are stricter than it where it admits several shapes (see Validate), so mutations are not
// compared with it.
func TestCorpusMeetsTykSchema(t *testing.T) {
	shared := sharedSchema(t)
	if shared == nil {
		t.Skip("no shared reference folder beside the repository")
	}
	for name, x := range corpus(t) {
		if err := shared.Validate(x); err != nil {
			t.Errorf("%s: Tyk's schema refuses a corpus document: %v", name, err)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// sharedSchema is Tyk's own schema from the shared reference folder beside the repository, or nil.
func sharedSchema(t *testing.T) *jsonschema.Schema {
	dir, err := filepath.Abs(".")
	if err != nil {
		return nil
	}
	for ; filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			raw, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "shared", "reference", "tyk", schemaFile))
			if err != nil {
				return nil
			}
			return compileSchema(t, "shared-"+schemaFile, raw)
		}
	}
	return nil
}

// TestCheckAndValidate: Check reports every problem, the restated constraints included; Validate (intake)
// stops at the first and leaves those out; an upstream without a URL is valid when load balancing or service
// discovery gives the targets.
func TestCheckAndValidate(t *testing.T) {
	ctx := context.Background()
	valid := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"x-tyk-api-gateway":{"info":{"name":"n","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/p/"}}}}`
	if p := Check(ctx, []byte(valid)); len(p) != 0 {
		t.Fatalf("valid document: %q", p)
	}
	strict := strings.Replace(valid, `"upstream":{"url":"http://u/"}`, `"upstream":{"url":"http://u/","rateLimit":{"enabled":"yes","rate":1,"per":"1 minute"}}`, 1)
	p := Check(ctx, []byte(strict))
	if len(p) != 2 || !strings.Contains(p[0], "upstream.rateLimit.enabled: must be a boolean") || !strings.Contains(p[1], "upstream.rateLimit.per: must match") {
		t.Errorf("Check: %q, want the two rateLimit problems", p)
	}
	if err := Validate(ctx, []byte(strict)); err != nil {
		t.Errorf("Validate applies the restated constraints: %v", err)
	}
	for _, part := range []string{`"loadBalancing":{"enabled":true,"targets":[{"url":"http://a/","weight":1}]}`, `"serviceDiscovery":{"enabled":true}`} {
		doc := strings.Replace(valid, `"upstream":{"url":"http://u/"}`, `"upstream":{"url":"",`+part+`}`, 1)
		if err := Validate(ctx, []byte(doc)); err != nil {
			t.Errorf("%s: %v", part, err)
		}
		if p := Check(ctx, []byte(doc)); len(p) != 0 {
			t.Errorf("%s: %q", part, p)
		}
	}
	noLB := strings.Replace(valid, `"upstream":{"url":"http://u/"}`, `"upstream":{"url":"","loadBalancing":{"enabled":false,"targets":[{"url":"http://a/","weight":1}]}}`, 1)
	if err := Validate(ctx, []byte(noLB)); err == nil || !strings.Contains(err.Error(), "upstream.url: must not be empty") {
		t.Errorf("disabled load balancing: %v, want the empty URL refused", err)
	}
}
