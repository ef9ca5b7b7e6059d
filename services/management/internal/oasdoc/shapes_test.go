package oasdoc

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// The shapes the batches once left to a whole check (batches.go): each a
// valid document as large as the intake takes.

// callbackPaths is smallPaths with a callback on each operation: written
// in place (inline), or (refs) a reference to one of a hundred entries of
// components.callbacks.
func callbackPaths(n int, refs bool) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Callbacks","version":"1"},"paths":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		callback := `{"{$request.body#/url}":{"post":{"responses":{"200":{"description":"ok"}}}}}`
		if refs {
			callback = fmt.Sprintf(`{"$ref":"#/components/callbacks/C%d"}`, i%100)
		}
		fmt.Fprintf(&b, `"/p%d":{"get":{"callbacks":{"done":%s},"responses":{"200":{"description":"ok"}}}}`, i, callback)
	}
	b.WriteString(`}`)
	if refs {
		b.WriteString(`,"components":{"callbacks":{`)
		for i := range 100 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"C%d":{"{$request.body#/url%d}":{"post":{"responses":{"200":{"description":"ok"}}}}}`, i, i)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`,"x-tyk-api-gateway":{"info":{"name":"Callbacks","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/cb/"}}}}`)
	return []byte(b.String())
}

// intoComponents is referencedSchemas with each path's reference to an
// array schema naming its items ("#/components/schemas/S15/items").
func intoComponents(n int) []byte {
	return regexp.MustCompile(`("schema":\{"\$ref":"#/components/schemas/S[1-9]\d+)"`).ReplaceAll(referencedSchemas(n), []byte(`$1/items"`))
}

// pathRefs is a document of n paths, each but the first ten a path item
// reference to one of those ("#/paths/~1p3"), written escaped as a JSON
// pointer must be.
func pathRefs(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Refs","version":"1"},"paths":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i < 10 {
			fmt.Fprintf(&b, `"/p%d":{"get":{"responses":{"200":{"description":"ok"}}}}`, i)
		} else {
			fmt.Fprintf(&b, `"/p%d":{"$ref":"#/paths/~1p%d"}`, i, i%10)
		}
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Refs","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/refs/"}}}}`)
	return []byte(b.String())
}

// intoPaths is a document of n paths, each but the first ten answering
// with a response of one of those, referenced into its path
// ("#/paths/~1p3/get/responses/200").
func intoPaths(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Into","version":"1"},"paths":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i < 10 {
			fmt.Fprintf(&b, `"/p%d":{"get":{"responses":{"200":{"description":"ok %d"}}}}`, i, i)
		} else {
			fmt.Fprintf(&b, `"/p%d":{"get":{"responses":{"200":{"$ref":"#/paths/~1p%d/get/responses/200"}}}}`, i, i%10)
		}
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Into","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/into/"}}}}`)
	return []byte(b.String())
}

// encodedRefs is referencedSchemas with every reference's name written
// %-encoded ("#/components/schemas/%53%35"), as a URI fragment may be.
func encodedRefs(n int) []byte {
	doc := string(referencedSchemas(n))
	return []byte(strings.ReplaceAll(doc, `"#/components/schemas/S`, `"#/components/schemas/%53`))
}

// TestPathRefs: path item references followed in batches agree with
// kin-openapi on valid and refused documents (a problem found in a batch
// is named as the whole check names it, or left to it): a target after its
// reference, a reference from a templated path (kin-openapi checks the
// target's operations against the referencing path's template), a target
// with a problem, a target that references components.
func TestPathRefs(t *testing.T) {
	base := string(pathRefs(30))
	for _, c := range []struct {
		name    string
		from    string
		to      string
		refused bool
	}{
		{"valid", "", "", false},
		{"a target after its reference", `"/p0":{`, `"/a":{"$ref":"#/paths/~1z"},"/p0":{`, false},
		{"a reference from a templated path", `"/p12":{"$ref"`, `"/p12/{id}":{"$ref"`, true},
		{"a target with a problem", `"/p3":{"get":{"responses":{"200":{"description":"ok"}}}}`, `"/p3":{"get":{"parameters":[{"name":"q","in":"nowhere"}],"responses":{"200":{"description":"ok"}}}}`, true},
		{"a target referencing components", `"/p3":{"get":{"responses":{"200":{"description":"ok"}}}}`, `"/p3":{"get":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}`, true},
		{"a target with an undeclared scheme", `"/p3":{"get":{`, `"/p3":{"get":{"security":[{"k":[]}],`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(base, c.from, c.to, 1)
			if c.name == "a target after its reference" {
				doc = strings.Replace(doc, `"/p9":{`, `"/z":{"get":{"responses":{"200":{"description":"ok"}}}},"/p9":{`, 1)
			}
			if doc == base && c.from != "" {
				t.Fatalf("%q is not in the document", c.from)
			}
			if _, refused := sameAsKin(t, []byte(doc)); refused != c.refused {
				t.Errorf("refused: %v, want %v (%v)", refused, c.refused, Validate(context.Background(), []byte(doc)))
			}
			root, _ := rawjson.Members([]byte(doc))
			for _, limit := range []int{1, minBatch} {
				valid, problem := validInBatchesOf(context.Background(), []byte(doc), root, limit)
				if !valid && problem == nil && !c.refused { // a refused one may be: a target's problem
					t.Errorf("batches of %d bytes: left to the whole check", limit)
				}
				// one problem: the batches name it as the whole check does
				if want := kinValidate(context.Background(), []byte(doc)); problem != nil && errText(invalid("invalid OpenAPI document: %s", problem)) != errText(want) {
					t.Errorf("batches of %d bytes: %v\nkin-openapi alone: %v", limit, problem, want)
				}
			}
		})
	}
	withComponents := strings.Replace(base, `"x-tyk-api-gateway"`, `"components":{"responses":{"R":{"description":"r"}}},"x-tyk-api-gateway"`, 1)
	withComponents = strings.Replace(withComponents, `"/p3":{"get":{"responses":{"200":{"description":"ok"}}}}`, `"/p3":{"get":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}`, 1)
	if _, refused := sameAsKin(t, []byte(withComponents)); refused {
		t.Error("a target referencing components: refused")
	}
	root, _ := rawjson.Members([]byte(withComponents))
	if valid, _ := validInBatchesOf(context.Background(), []byte(withComponents), root, 1); !valid {
		t.Error("a target referencing components: not found valid in batches")
	}
}

// FuzzReferences compares Validate, and the batches' verdicts, with
// kin-openapi alone on documents whose references are written in every
// spelling: itemRef a path item reference and schemaRef a schema
// reference (each its JSON string's text, escapes included), name a
// path's, callback a callback's own text.
func FuzzReferences(f *testing.F) {
	cb := `{"{$request.body#/url}":{"post":{"responses":{"200":{"description":"ok"}}}}}`
	f.Add(`#/paths/~1b`, `#/components/schemas/P%65t`, `/b`, cb)
	f.Add(`#/paths/%7E1b`, `#/components/schemas/P\u0065t`, `b`, `{"$ref":"#/components/callbacks/C2"}`)
	f.Add(`#/paths/~1a~1b`, `#/components/%73chemas/Pet`, `/a/b`, `{"x":{"$ref":"#/paths/~1a"}}`)
	f.Add(`#/paths/~1b`, `#/components/schemas/b`, `b`, `{"x":{"get":{"security":[{"k":[]}],"responses":{"200":{"description":"ok"}}}}}`)
	f.Add(`#/paths/~1b`, `#/components/schemas/~1b`, `/b`, `{"$ref":"#/components/callbacks/C"}`)
	f.Add(`#/paths/~1b`, `#/components/schemas/Pet/properties/x`, `/b`, `{"$ref":"#/components/callbacks/C2/x"}`)
	f.Add(`#/paths/~1b`, `#/paths/~1b/get/responses/200/content/application~1json/schema`, `/b`, cb)
	f.Add(`#/paths/~1b/get`, `#/paths/~1r/get/responses/200/content/application~1json/schema`, `/b`, cb)
	f.Fuzz(func(t *testing.T, itemRef, schemaRef, name, callback string) {
		quoted := string(rawjson.Quote(name))
		body := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{` +
			`"/a":{"get":{"callbacks":{"c":` + callback + `},"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"` + schemaRef + `"}}}}}}},` +
			`"/r":{"$ref":"` + itemRef + `"},` + quoted + `:{"get":{"responses":{"200":{"description":"ok"}}}}},` +
			`"components":{"schemas":{"Pet":{"type":"integer"}},"callbacks":{"C":` + callback + `,"C2":` + cb + `}},` +
			`"x-tyk-api-gateway":{"info":{"name":"t","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/t/"}}}}`
		doc, err := Parse([]byte(body), false)
		if err != nil {
			return
		}
		if _, refused := sameAsKin(t, doc); !refused && testing.Verbose() {
			t.Log("valid")
		}
	})
}

// TestPathRefsBounded: a path item referenced from every batch is checked
// with each only while the text checked again stays within 4 times the
// paths' own;
// beyond (a large one), the document is checked whole.
func TestPathRefsBounded(t *testing.T) {
	doc := func(size int) []byte {
		var b strings.Builder
		b.WriteString(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/big":{"get":{"description":"` + strings.Repeat("d", size) + `","responses":{"200":{"description":"ok"}}}}`)
		for i := range 2000 {
			fmt.Fprintf(&b, `,"/r%d":{"$ref":"#/paths/~1big"}`, i)
		}
		b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"t","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/t/"}}}}`)
		return []byte(b.String())
	}
	for _, c := range []struct {
		size      int
		inBatches bool
	}{{500, true}, {50_000, false}} {
		d := doc(c.size)
		root, _ := rawjson.Members(d)
		if valid, problem := validInBatchesOf(context.Background(), d, root, minBatch); valid != c.inBatches || problem != nil {
			t.Errorf("a target of %d bytes: valid in batches %v (problem %v), want %v", c.size, valid, problem, c.inBatches)
		}
		if err := Validate(context.Background(), d); err != nil {
			t.Error(err)
		}
	}
}

// TestCallbacksInBatches: documents with callbacks, valid and refused,
// agree with kin-openapi alone, and a problem a batch finds in one is
// named as the whole check names it (a problem in decoding is left to the
// whole check).
func TestCallbacksInBatches(t *testing.T) {
	inline, refs := string(callbackPaths(40, false)), string(callbackPaths(40, true))
	for _, c := range []struct {
		name, doc, from, to string
		refused, decoding   bool // decoding: a problem in decoding, left to the whole check
	}{
		{"inline", inline, "", "", false, false},
		{"references", refs, "", "", false, false},
		{"a reference to no callback", refs, `{"$ref":"#/components/callbacks/C7"}`, `{"$ref":"#/components/callbacks/None"}`, true, false},
		{"a component callback with a problem", refs, `"C9":{"{$request.body#/url9}":{"post":{"responses":{"200":{"description":"ok"}}}}}`, `"C9":{"{$request.body#/url9}":{"post":{}}}`, true, false},
		{"an inline callback with a problem", inline, `"/p7":{"get":{"callbacks":{"done":{"{$request.body#/url}":{"post":{"responses":{"200":{"description":"ok"}}}}}}`, `"/p7":{"get":{"callbacks":{"done":{"{$request.body#/url}":{"post":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}}}`, true, false},
		{"an inline callback of the wrong type", inline, `"/p7":{"get":{"callbacks":{"done":{`, `"/p7":{"get":{"callbacks":{"done":{"x":5,`, true, true},
		{"a component callback naming no scheme", refs, `"C9":{"{$request.body#/url9}":{"post":{`, `"C9":{"{$request.body#/url9}":{"post":{"security":[{"s":[]}],`, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(c.doc, c.from, c.to, 1)
			if doc == c.doc && c.from != "" {
				t.Fatalf("%q is not in the document", c.from)
			}
			if _, refused := sameAsKin(t, []byte(doc)); refused != c.refused {
				t.Errorf("refused: %v, want %v (%v)", refused, c.refused, Validate(context.Background(), []byte(doc)))
			}
			want := kinValidate(context.Background(), []byte(doc))
			root, _ := rawjson.Members([]byte(doc))
			for _, limit := range []int{1, minBatch} {
				valid, problem := validInBatchesOf(context.Background(), []byte(doc), root, limit)
				if !valid && problem == nil && !c.decoding {
					t.Errorf("batches of %d bytes: left to the whole check", limit)
				}
				if problem != nil && errText(invalid("invalid OpenAPI document: %s", problem)) != errText(want) {
					t.Errorf("batches of %d bytes: %v\nkin-openapi alone: %v", limit, problem, want)
				}
			}
		})
	}
}

// TestIntoComponents: references into components and into paths are
// followed in batches.
func TestIntoComponents(t *testing.T) {
	for _, doc := range [][]byte{intoComponents(300), intoPaths(300)} {
		if _, refused := sameAsKin(t, doc); refused {
			t.Errorf("refused: %.100s", doc)
		}
		root, _ := rawjson.Members(doc)
		for _, limit := range []int{1, minBatch} {
			if valid, _ := validInBatchesOf(context.Background(), doc, root, limit); !valid {
				t.Errorf("batches of %d bytes: not found valid: %.100s", limit, doc)
			}
		}
	}
}

// fallbackShapes are documents of the shapes the batches once left to a
// whole check, each large(n) (4 MB for 9,995 paths) with one change: the
// name, whether the intake refuses it, members put first in the root, and
// an edit (From replaced once by To).
var fallbackShapes = []struct {
	Name     string
	Refused  bool
	Root     string
	From, To string
}{
	{"webhooks", true, `"webhooks":{"w":{"post":{"responses":{"200":{"description":"ok"}}}}},`, "", ""},
	{"json-schema-dialect", true, `"jsonSchemaDialect":"https://json-schema.org/draft/2020-12/schema",`, "", ""},
	{"external-ref", true, "", `"/r7/{id}":{"get":{"operationId":"op7","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer","maximum":9007199254740993}}]`,
		`"/r7/{id}":{"get":{"operationId":"op7","parameters":[{"name":"id","in":"path","required":true,"schema":{"$ref":"other.json#/Id"}}]`},
	{"decoding", true, "", `"/r7/{id}":{"get":{"operationId":"op7","parameters":[`, `"/r7/{id}":{"get":{"operationId":"op7","tags":5,"parameters":[`},
	{"components-decoding", true, `"components":{"schemas":{"A":{"type":"string"},"S":{"type":"string","required":5}}},`, "", ""},
	{"problem-with-into-paths", true, "", `"/r0/{id}":{`, `"/q":{"get":{"parameters":[{"name":"x","in":"nowhere"}],"responses":{"200":{"$ref":"#/paths/~1r3~1{id}/get/responses/200"}}}},"/r0/{id}":{`},
	{"problem-with-into-components", true, `"components":{"schemas":{"P":{"type":"object","properties":{"id":{"type":"integer"}}}}},`,
		`"/r7/{id}":{"get":{"operationId":"op7","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer","maximum":9007199254740993}}]`,
		`"/r7/{id}":{"get":{"operationId":"op7","parameters":[{"name":"id","in":"path","required":true,"schema":{"$ref":"#/components/schemas/P/properties/id"}},{"name":"q","in":"nowhere"}]`},
	{"path-ref-siblings", false, "", `"/r0/{id}":{`, `"/plain":{"get":{"responses":{"200":{"description":"ok"}}}},"/alias":{"$ref":"#/paths/~1plain","summary":"s"},"/r0/{id}":{`},
	{"path-ref-to-ref", false, "", `"/r0/{id}":{`, `"/plain":{"get":{"responses":{"200":{"description":"ok"}}}},"/a":{"$ref":"#/paths/~1b"},"/b":{"$ref":"#/paths/~1plain"},"/r0/{id}":{`},
	{"operation-id-twice", true, "", `"operationId":"op7"`, `"operationId":"op3"`},
	{"paths-alike", true, "", `"/r0/{id}":{`, `"/r7/{x}":{"get":{"parameters":[{"name":"x","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},"/r0/{id}":{`},
	{"path-ref-operation-id", true, "", `"/r0/{id}":{`, `"/alias/{id}":{"$ref":"#/paths/~1r1~1{id}"},"/r0/{id}":{`},
}

// fallbackShape is the document of fallbackShapes[i] made from base.
func fallbackShape(i int, base []byte) []byte {
	c := fallbackShapes[i]
	out := string(base)
	if c.From != "" {
		if out = strings.Replace(out, c.From, c.To, 1); out == string(base) {
			panic(fmt.Sprintf("%s: %q is not in the document", c.Name, c.From))
		}
	}
	return []byte("{" + c.Root + out[1:])
}

// TestFallbackShapes: each of fallbackShapes, small, is refused or not as
// it says, with kin-openapi's verdict and message.
func TestFallbackShapes(t *testing.T) {
	for i, c := range fallbackShapes {
		t.Run(c.Name, func(t *testing.T) {
			doc := fallbackShape(i, large(30))
			if _, refused := sameAsKin(t, doc); refused != c.Refused {
				t.Errorf("refused: %v, want %v", refused, c.Refused)
			}
			want := kinValidate(context.Background(), doc)
			root, _ := rawjson.Members(doc)
			for _, limit := range []int{1, minBatch} {
				valid, problem := validInBatchesOf(context.Background(), doc, root, limit)
				t.Logf("batches of %d bytes: valid %v, problem %v", limit, valid, problem)
				if problem != nil && errText(invalid("invalid OpenAPI document: %s", problem)) != errText(want) {
					t.Errorf("batches of %d bytes: %v\nkin-openapi alone: %v", limit, problem, want)
				}
			}
		})
	}
}

// TestRefusedInBatches: documents with a problem of each kind once left to
// the whole check, alone and with others, are refused by the batches with
// the problem kin-openapi names (decoding first, the least path it cannot
// decode; then resolving; then webhooks and jsonSchemaDialect; then the
// least path with a problem, as Paths.Validate walks them in sorted order).
func TestRefusedInBatches(t *testing.T) {
	undecodable := func(n int) [2]string {
		return [2]string{fmt.Sprintf(`"/r%d/{id}":{"get":{`, n), fmt.Sprintf(`"/r%d/{id}":{"get":{"tags":%d,`, n, n)}
	}
	badParam := func(n int) [2]string {
		return [2]string{fmt.Sprintf(`"/r%d/{id}":{"get":{"operationId":"op%d","parameters":[{"name":"id","in":"path"`, n, n), fmt.Sprintf(`"/r%d/{id}":{"get":{"operationId":"op%d","parameters":[{"name":"id","in":"nowhere"`, n, n)}
	}
	external := func(n int) [2]string {
		return [2]string{fmt.Sprintf(`"/r%d/{id}":{"get":{"operationId":"op%d","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer","maximum":9007199254740993}}]`, n, n),
			fmt.Sprintf(`"/r%d/{id}":{"get":{"operationId":"op%d","parameters":[{"name":"id","in":"path","required":true,"schema":{"$ref":"x%d.json"}}]`, n, n, n)}
	}
	webhooks := [2]string{`"paths":{`, `"webhooks":{"w":{"post":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}},"paths":{`}
	dialect := [2]string{`"paths":{`, `"jsonSchemaDialect":"d","paths":{`}
	components := [2]string{`"paths":{`, `"components":{"responses":{"R":{"description":"r"}},"schemas":{"S":{"type":"string"}}},"paths":{`}
	intoPath := [2]string{`"/r0/{id}":{`, `"/q":{"get":{"responses":{"200":{"$ref":"#/paths/~1r3~1{id}/get/responses/200"}}}},"/r0/{id}":{`}
	componentsAfter := [2]string{`"x-tyk-api-gateway"`, `"components":{"responses":{"R":{"description":"r"}},"schemas":{"S":{"type":"string"},"T":{"type":"string"}}},"x-tyk-api-gateway"`}
	componentsReferenced := [2]string{`"paths":{`, `"components":{"schemas":{"A":{"items":{"$ref":"#/components/schemas/B"},"type":"array"},"S":{"type":"string"},"B":{"type":"string"}}},"paths":{`}
	componentsP := [2]string{`"paths":{`, `"components":{"schemas":{"P":{"type":"object","properties":{"id":{"type":"integer"},"s":{"$ref":"#/components/schemas/Q"}}},"Q":{"type":"string"}}},"paths":{`}
	intoComponent := func(n int) [2]string {
		return [2]string{fmt.Sprintf(`"/r%d/{id}":{"get":{"operationId":"op%d","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer","maximum":9007199254740993}}]`, n, n),
			fmt.Sprintf(`"/r%d/{id}":{"get":{"operationId":"op%d","parameters":[{"name":"id","in":"path","required":true,"schema":{"$ref":"#/components/schemas/P/properties/id"}}]`, n, n)}
	}
	undecodableSchema := [2]string{`"S":{"type":"string"}`, `"S":{"type":"string","required":5}`}
	badComponent2 := [2]string{`"T":{"type":"string"}`, `"T":{"type":"nothing"}`}
	badComponent := [2]string{`"S":{"type":"string"}`, `"S":{"type":"nothing"}`}
	externalComponent := [2]string{`"S":{"type":"string"}`, `"S":{"$ref":"s.json"}`}
	sameID := func(n, as int) [2]string {
		return [2]string{fmt.Sprintf(`"operationId":"op%d"`, n), fmt.Sprintf(`"operationId":"op%d"`, as)}
	}
	alike := func(n int, name string) [2]string {
		return [2]string{`"/r0/{id}":{`, fmt.Sprintf(`"/r%d/{%s}":{"get":{"parameters":[{"name":"%s","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},"/r0/{id}":{`, n, name, name)}
	}
	alias := func(name string, n int) [2]string {
		return [2]string{`"/r0/{id}":{`, fmt.Sprintf(`"%s":{"$ref":"#/paths/~1r%d~1{id}"},"/r0/{id}":{`, name, n)}
	}
	for _, c := range []struct {
		name  string
		edits [][2]string
	}{
		{"an undecodable component", [][2]string{components, undecodableSchema}},
		{"undecodable components, one referenced before", [][2]string{componentsReferenced, {`"B":{"type":"string"}`, `"B":{"type":"string","nullable":"yes"}`}, undecodableSchema}},
		{"an undecodable component and path, the components first", [][2]string{components, undecodableSchema, undecodable(3)}},
		{"an undecodable component and path, the paths first", [][2]string{componentsAfter, undecodableSchema, undecodable(3)}},
		{"an undecodable component and other problems", [][2]string{componentsAfter, undecodableSchema, badComponent2, external(3), webhooks}},
		{"references into a component and problems of paths", [][2]string{componentsP, intoComponent(4), intoComponent(22), badParam(21), badParam(5)}},
		{"a reference into a component and a problem of the components", [][2]string{componentsP, intoComponent(4), {`"Q":{"type":"string"}`, `"Q":{"type":"nothing"}`}}},
		{"operationIds twice", [][2]string{sameID(20, 3), sameID(4, 25), sameID(12, 2)}},
		{"an operationId twice and a problem of paths", [][2]string{sameID(20, 3), badParam(25)}},
		{"paths alike", [][2]string{alike(21, "x"), alike(5, "y"), alike(5, "a")}},
		{"paths alike and problems of paths", [][2]string{alike(21, "x"), badParam(22), badParam(20)}},
		{"paths alike and a problem of the path alike", [][2]string{alike(21, "x"), badParam(21)}},
		{"paths alike and an operationId twice", [][2]string{alike(21, "x"), sameID(1, 2)}},
		{"a path item reference to an item with an operationId", [][2]string{alias("/alias/{id}", 7)}},
		{"path item references to items with an operationId", [][2]string{alias("/z/{id}", 2), alias("/b/{id}", 9), sameID(28, 4)}},
		{"two undecodable paths", [][2]string{undecodable(25), undecodable(12)}},
		{"an undecodable path and other problems", [][2]string{badParam(3), external(5), undecodable(25), webhooks, components}},
		{"two problems of paths", [][2]string{badParam(25), badParam(12)}},
		{"a problem of paths and an external reference", [][2]string{badParam(2), external(20)}},
		{"two external references", [][2]string{external(21), external(3)}},
		{"a reference that does not parse", [][2]string{componentsP, intoComponent(4), {`"#/components/schemas/P/properties/id"`, `"#/components/schemas/P%zz"`}}},
		{"references that do not parse and an external one", [][2]string{components, external(12), {`"$ref":"x12.json"`, `"$ref":"#/components/schemas/%zS"`}, external(3)}},
		{"webhooks and a problem of paths", [][2]string{components, webhooks, badParam(7)}},
		{"webhooks to no component", [][2]string{webhooks}},
		{"webhooks and a problem of the components", [][2]string{components, webhooks, badComponent}},
		{"jsonSchemaDialect and an external reference", [][2]string{dialect, external(9)}},
		{"jsonSchemaDialect and webhooks", [][2]string{components, dialect, webhooks}},
		{"an external reference in the components", [][2]string{components, externalComponent, badParam(3)}},
		{"a reference into a path and problems of paths", [][2]string{intoPath, badParam(25), badParam(3)}},
		{"a problem of the components and of paths", [][2]string{components, badComponent, badParam(3)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := string(large(30))
			for _, e := range c.edits {
				if !strings.Contains(doc, e[0]) {
					t.Fatalf("%q is not in the document", e[0])
				}
				doc = strings.Replace(doc, e[0], e[1], 1)
			}
			if _, refused := sameAsKin(t, []byte(doc)); !refused {
				t.Fatal("not refused")
			}
			want := kinValidate(context.Background(), []byte(doc))
			root, _ := rawjson.Members([]byte(doc))
			for _, limit := range []int{1, 4 << 10, minBatch} {
				valid, problem := validInBatchesOf(context.Background(), []byte(doc), root, limit)
				if valid || problem == nil || errText(invalid("invalid OpenAPI document: %s", problem)) != errText(want) {
					t.Errorf("batches of %d bytes: valid %v, %v\nkin-openapi alone: %v", limit, valid, problem, want)
				}
			}
			t.Log(want)
		})
	}
}

// TestPathRefForms: path item references with members beside $ref and
// chains of them are judged in batches as the whole check judges them (the
// loader copies an item as it stands when it reaches the reference, so a
// chain's copy depends on the paths' sorted order); a chain whose items
// name an operationId, or a reference to itself, is left to the whole
// check.
func TestPathRefForms(t *testing.T) {
	base := strings.Replace(string(pathRefs(30)), `"x-tyk-api-gateway"`, `"components":{"responses":{"R":{"description":"r"}}},"x-tyk-api-gateway"`, 1)
	chain := [2]string{`"/p22":{"$ref":"#/paths/~1p2"}`, `"/p22":{"$ref":"#/paths/~1p13"}`} // to /p3, after /p13 in sorted order
	for _, c := range []struct {
		name    string
		edits   [][2]string
		decided bool // valid or a problem named in batches
	}{
		{"a summary beside", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"summary":"s","$ref":"#/paths/~1p2"}`}}, true},
		{"an operation beside", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p2","post":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}`}}, true},
		{"an operation beside, with a problem", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p2","post":{"responses":{}}}`}}, true},
		{"an operation beside, to no component", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p2","post":{"responses":{"200":{"$ref":"#/components/responses/None"}}}}`}}, false},
		{"an operationId beside", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p2","get":{"operationId":"g","responses":{"200":{"description":"ok"}}}}`}}, true},
		{"an operationId beside, twice", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p2","put":{"operationId":"g","responses":{"200":{"description":"ok"}}}},"/p99":{"$ref":"#/paths/~1p12"}`}}, false},
		{"overriding the target's operationId", [][2]string{{`"/p2":{"get":{`, `"/p2":{"get":{"operationId":"two",`}}, true},
		{"a chain, the copy before its target", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p13"}`}}, true},
		{"a chain, the copy after its target", [][2]string{chain}, true},
		{"a chain to a problem", [][2]string{chain, {`"/p3":{"get":{"responses":{"200":{"description":"ok"}}}}`, `"/p3":{"get":{"responses":{}}}`}}, true},
		{"a chain to an operationId", [][2]string{chain, {`"/p3":{"get":{`, `"/p3":{"get":{"operationId":"three",`}}, false},
		{"a cycle", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p14"},"/p14a":{"$ref":"#/paths/~1p12"}`}}, true},
		{"itself", [][2]string{{`"/p12":{"$ref":"#/paths/~1p2"}`, `"/p12":{"$ref":"#/paths/~1p12"}`}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := base
			for _, e := range c.edits {
				if !strings.Contains(doc, e[0]) {
					t.Fatalf("%q is not in the document", e[0])
				}
				doc = strings.Replace(doc, e[0], e[1], 1)
			}
			sameAsKin(t, []byte(doc))
			want := kinValidate(context.Background(), []byte(doc))
			root, _ := rawjson.Members([]byte(doc))
			for _, limit := range []int{1, minBatch} {
				valid, problem := validInBatchesOf(context.Background(), []byte(doc), root, limit)
				if c.decided != (valid || problem != nil) {
					t.Errorf("batches of %d bytes: decided %v, want %v (%v)", limit, valid || problem != nil, c.decided, want)
				}
				if problem != nil && errText(invalid("invalid OpenAPI document: %s", problem)) != errText(want) {
					t.Errorf("batches of %d bytes: %v\nkin-openapi alone: %v", limit, problem, want)
				}
			}
			t.Log(want)
		})
	}
}
