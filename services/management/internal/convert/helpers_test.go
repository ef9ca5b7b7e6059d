package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// sharedDir returns the project's shared reference folder: "shared" beside the repository root (the folder
// holding go.work). It skips the test when the folder is absent: only the optional cross-checks against the
// shared reference use it, never coverage of their own.
func sharedDir(t testing.TB) string {
	t.Helper()
	shared, err := findShared()
	if err != nil {
		t.Skipf("%v; skipping", err)
	}
	return shared
}

// findShared locates the shared folder beside the repository root.
func findShared() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			shared := filepath.Join(filepath.Dir(d), "shared")
			if _, err := os.Stat(filepath.Join(shared, "reference", "tyk")); err != nil {
				return "", fmt.Errorf("shared reference material not found at %s (it lives beside the repository root)", shared)
			}
			return shared, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s, so the shared reference folder cannot be located", dir)
		}
	}
}

var (
	schemaOnce sync.Once
	tykSchema  *jsonschema.Schema
	schemaErr  error
)

// sharedExtensionSchema compiles the shared x-tyk-api-gateway.schema.json (draft-04) once; nil when the
// shared folder is absent (the restated rules of extrules_test.go still apply).
func sharedExtensionSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		shared, err := findShared()
		if err != nil {
			return
		}
		f, err := os.Open(filepath.Join(shared, "reference", "tyk", "x-tyk-api-gateway.schema.json"))
		if err != nil {
			schemaErr = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft4)
		if err := c.AddResource("x-tyk-api-gateway.schema.json", doc); err != nil {
			schemaErr = err
			return
		}
		tykSchema, schemaErr = c.Compile("x-tyk-api-gateway.schema.json")
	})
	if schemaErr != nil {
		t.Fatalf("compiling the shared extension schema: %v", schemaErr)
	}
	return tykSchema
}

// documentProblems checks a produced document against the OpenAPI 3.0 rules and the extension schema's
// constraints (restated in extrules_test.go; also the schema file itself when the shared folder is present).
func documentProblems(t testing.TB, raw []byte) []string {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	problems := openAPIRules(doc)
	x, ok := doc["x-tyk-api-gateway"]
	if !ok {
		return append(problems, "x-tyk-api-gateway is missing")
	}
	problems = append(problems, extensionProblems(x)...)
	if schema := sharedExtensionSchema(t); schema != nil {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustMarshal(t, x)))
		if err != nil {
			return append(problems, err.Error())
		}
		if err := schema.Validate(inst); err != nil {
			problems = append(problems, "x-tyk-api-gateway (shared schema): "+err.Error())
		}
	}
	return problems
}

// expectValidDocument fails the test when raw is not a valid Tyk OAS document.
func expectValidDocument(t testing.TB, what string, raw []byte) {
	t.Helper()
	if p := documentProblems(t, raw); len(p) > 0 {
		t.Errorf("%s is not a valid Tyk OAS document:\n  %s\n%s", what, strings.Join(p, "\n  "), raw)
	}
}

var (
	openAPI30     = regexp.MustCompile(`^3\.0\.\d+$`)
	templateParam = regexp.MustCompile(`\{([^{}]+)\}`)
	statusKey     = regexp.MustCompile(`^(default|[1-5](\d\d|XX))$`)
)

// openAPIRules checks a decoded document against the OpenAPI 3.0 rules a conversion can break.
func openAPIRules(doc map[string]any) []string {
	var out []string
	if v, _ := doc["openapi"].(string); !openAPI30.MatchString(v) {
		out = append(out, fmt.Sprintf("openapi %v is not 3.0.x", doc["openapi"]))
	}
	info, _ := doc["info"].(map[string]any)
	for _, k := range []string{"title", "version"} {
		if s, _ := info[k].(string); s == "" {
			out = append(out, "info."+k+" must be a non-empty string")
		}
	}
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		return append(out, "paths must be an object")
	}
	schemes := map[string]any{}
	if comps, ok := doc["components"].(map[string]any); ok {
		schemes, _ = comps["securitySchemes"].(map[string]any)
	}
	if sec, ok := doc["security"].([]any); ok {
		for _, req := range sec {
			for name := range req.(map[string]any) {
				if _, ok := schemes[name]; !ok {
					out = append(out, fmt.Sprintf("security names %q, which components.securitySchemes does not define", name))
				}
			}
		}
	}
	for _, p := range sortedKeys(paths) {
		if !strings.HasPrefix(p, "/") {
			out = append(out, fmt.Sprintf("path %q does not start with /", p))
		}
		item, _ := paths[p].(map[string]any)
		declared := declaredParams(item)
		var names []string
		for _, m := range templateParam.FindAllStringSubmatch(p, -1) {
			if slices.Contains(names, m[1]) {
				out = append(out, fmt.Sprintf("path %s names parameter %q twice", p, m[1]))
			}
			names = append(names, m[1])
		}
		for _, method := range []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"} {
			op, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			if id, _ := op["operationId"].(string); id == "" {
				out = append(out, fmt.Sprintf("%s %s has no operationId", method, p))
			}
			resp, _ := op["responses"].(map[string]any)
			if len(resp) == 0 {
				out = append(out, fmt.Sprintf("%s %s: responses must not be empty", method, p))
			}
			for code, r := range resp {
				if !statusKey.MatchString(code) {
					out = append(out, fmt.Sprintf("%s %s: response key %q", method, p, code))
				}
				if _, ok := r.(map[string]any)["description"].(string); !ok {
					out = append(out, fmt.Sprintf("%s %s: response %s has no description", method, p, code))
				}
			}
			all := append(slices.Clone(declared), declaredParams(op)...)
			for _, n := range names {
				if !slices.Contains(all, n) {
					out = append(out, fmt.Sprintf("%s %s: path parameter %q is not declared", method, p, n))
				}
			}
		}
	}
	return out
}

func declaredParams(obj map[string]any) []string {
	var names []string
	list, _ := obj["parameters"].([]any)
	for _, p := range list {
		m, _ := p.(map[string]any)
		if name, _ := m["name"].(string); m["in"] == "path" && m["required"] == true {
			names = append(names, name)
		}
	}
	return names
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeJSON decodes with numbers kept as json.Number.
func decodeJSON(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// sameNumber compares two JSON numbers by value.
func sameNumber(a, b json.Number) bool {
	x, ok1 := new(big.Rat).SetString(string(a))
	y, ok2 := new(big.Rat).SetString(string(b))
	return ok1 && ok2 && x.Cmp(y) == 0
}
