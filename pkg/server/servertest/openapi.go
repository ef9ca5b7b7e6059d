package servertest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Description is a service's served /openapi.json (Swagger 2.0), for tests
// that compare what it documents with what the service answers.
type Description struct {
	doc       map[string]any
	base      string
	exercised map[string]map[string]bool // "METHOD path" -> query names sent
}

// Call is one real request checked against its documented operation.
type Call struct {
	// Method and Path name the operation as documented, such as
	// GET /api/v1/llm-settings/{id}.
	Method, Path string
	// URL is the concrete path and query sent, such as /api/v1/llm-settings/1?page=1.
	URL string
	// Body is the request body, if any.
	Body string
	// Effect, when set, proves from the answer's body that the query
	// parameters took effect (a misspelt name is silently ignored).
	Effect func(body []byte) string
}

// OpenAPI fetches base/openapi.json.
func OpenAPI(tb testing.TB, base string) *Description {
	tb.Helper()
	res, err := http.Get(base + "/openapi.json")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	d := &Description{base: base, exercised: map[string]map[string]bool{}}
	if err := json.NewDecoder(res.Body).Decode(&d.doc); err != nil {
		tb.Fatalf("/openapi.json: %v", err)
	}
	return d
}

// CheckSecurity fails unless the description defines scheme as an API key
// in the Authorization header and requires it for every operation.
func (d *Description) CheckSecurity(tb testing.TB, scheme string) {
	tb.Helper()
	def, _ := dig(d.doc, "securityDefinitions", scheme).(map[string]any)
	if def["type"] != "apiKey" || def["in"] != "header" || def["name"] != "Authorization" || def["description"] == "" {
		tb.Errorf("securityDefinitions.%s = %v, want an apiKey in the Authorization header, described", scheme, def)
	}
	reqs, _ := d.doc["security"].([]any)
	if len(reqs) != 1 || dig(reqs[0], scheme) == nil {
		tb.Errorf("security = %v, want [{%s: []}]", d.doc["security"], scheme)
	}
}

// Check sends c with the Authorization header auth, then without it, and
// fails where the answers differ from the documented operation: the one
// success status, no body for 204, the top-level JSON names of the success
// and 401 bodies, and query parameter names.
func (d *Description) Check(tb testing.TB, auth string, c Call) {
	tb.Helper()
	name := c.Method + " " + c.Path
	op, ok := dig(d.doc, "paths", c.Path, strings.ToLower(c.Method)).(map[string]any)
	if !ok {
		tb.Errorf("%s is not documented", name)
		return
	}
	responses, _ := op["responses"].(map[string]any)
	var success []string
	for code := range responses {
		if strings.HasPrefix(code, "2") {
			success = append(success, code)
		}
	}
	if len(success) != 1 {
		tb.Errorf("%s documents success statuses %v, want exactly one", name, success)
		return
	}
	d.checkQuery(tb, name, op, c.URL)

	status, body := d.send(tb, c, auth)
	if strconv.Itoa(status) != success[0] {
		tb.Errorf("%s %s answered %d, documented %s: %s", c.Method, c.URL, status, success[0], body)
		return
	}
	d.checkSuccess(tb, name+" "+success[0], responses[success[0]], status, body)
	if c.Effect != nil {
		if msg := c.Effect(body); msg != "" {
			tb.Errorf("%s %s: %s", c.Method, c.URL, msg)
		}
	}

	status, body = d.send(tb, c, "")
	resp, ok := responses[strconv.Itoa(status)].(map[string]any)
	if status != http.StatusUnauthorized || !ok {
		tb.Errorf("%s without a key answered %d, documented %v", name, status, keys(responses))
		return
	}
	d.checkNames(tb, name+" 401", resp, body)
}

// checkQuery checks that every query parameter of rawURL is documented
// for op, and notes it as exercised.
func (d *Description) checkQuery(tb testing.TB, name string, op map[string]any, rawURL string) {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	documented := d.queryParams(op)
	if d.exercised[name] == nil {
		d.exercised[name] = map[string]bool{}
	}
	for q := range u.Query() {
		if !slices.Contains(documented, q) {
			tb.Errorf("%s: query parameter %q is sent but not documented (documented: %v)", name, q, documented)
		}
		d.exercised[name][q] = true
	}
}

// checkSuccess checks a success's body against its documented response.
func (d *Description) checkSuccess(tb testing.TB, name string, response any, status int, body []byte) {
	tb.Helper()
	resp, _ := response.(map[string]any)
	if status != http.StatusNoContent {
		d.checkNames(tb, name, resp, body)
		return
	}
	// protoc-gen-openapiv2 always writes a schema, empty ({}) when the
	// annotation gives none.
	if schema, _ := resp["schema"].(map[string]any); len(schema) != 0 || len(body) != 0 {
		tb.Errorf("%s with schema %v and body %q, want neither", name, resp["schema"], body)
	}
}

// CheckQueriesExercised fails when a documented query parameter of a
// checked operation was never sent.
func (d *Description) CheckQueriesExercised(tb testing.TB) {
	tb.Helper()
	for name, sent := range d.exercised {
		method, path, _ := strings.Cut(name, " ")
		op, _ := dig(d.doc, "paths", path, strings.ToLower(method)).(map[string]any)
		for _, q := range d.queryParams(op) {
			if !sent[q] {
				tb.Errorf("%s documents query parameter %q, which no check sent", name, q)
			}
		}
	}
}

func (d *Description) queryParams(op map[string]any) []string {
	var out []string
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		if p, _ := p.(map[string]any); p["in"] == "query" {
			out = append(out, p["name"].(string))
		}
	}
	return out
}

func (d *Description) send(tb testing.TB, c Call, auth string) (int, []byte) {
	tb.Helper()
	req, err := http.NewRequest(c.Method, d.base+c.URL, strings.NewReader(c.Body))
	if err != nil {
		tb.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if c.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return res.StatusCode, body
}

// checkNames compares the top-level JSON names of body (of each element,
// for an array) with the properties of the documented schema; a schema
// without properties (a raw document) only needs a JSON body.
func (d *Description) checkNames(tb testing.TB, what string, resp map[string]any, body []byte) {
	tb.Helper()
	schema := d.resolve(resp["schema"])
	if schema == nil {
		tb.Errorf("%s: no schema documented", what)
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		tb.Errorf("%s: body %q is not JSON", what, body)
		return
	}
	objects := []any{v}
	if schema["type"] == "array" {
		arr, ok := v.([]any)
		if !ok {
			tb.Errorf("%s: documented an array, got %s", what, body)
			return
		}
		objects, schema = arr, d.resolve(schema["items"])
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		return
	}
	want := keys(props)
	for _, o := range objects {
		m, ok := o.(map[string]any)
		if !ok {
			tb.Errorf("%s: documented an object, got %s", what, body)
			return
		}
		if got := keys(m); !slices.Equal(got, want) {
			tb.Errorf("%s: body names %v, documented %v", what, got, want)
		}
	}
}

// Schema is the schema at a local reference such as "#/definitions/x",
// with $ref followed.
func (d *Description) Schema(ref string) map[string]any {
	return d.resolve(map[string]any{"$ref": ref})
}

// resolve follows local $ref JSON pointers ("#/definitions/x/properties/y").
func (d *Description) resolve(s any) map[string]any {
	m, _ := s.(map[string]any)
	for i := 0; m != nil && m["$ref"] != nil && i < 10; i++ {
		ref, _ := m["$ref"].(string)
		var path []string
		for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			path = append(path, strings.NewReplacer("~1", "/", "~0", "~").Replace(p))
		}
		m, _ = dig(d.doc, path...).(map[string]any)
	}
	return m
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
