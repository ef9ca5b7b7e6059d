package oasdoc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// kin-openapi checks a referenced schema again at every reference
// (SchemaRef.Validate starts a fresh walk each time), and a referenced
// parameter, response or path item with it: a document of one large
// schema referenced from every path cost its paths times that schema. These
// shapes put the large part once and reference it from every path.

// fanoutShapes are the places a large part is referenced from, each
// path's text with %d its number (the large part is Big, a component
// schema of n properties, unless the shape says otherwise).
var fanoutShapes = []struct {
	name string
	path string // a path item; %[1]d is the path's number
	// components are the document's own components but Big, and paths
	// before the fanned-out ones (a target of path item references)
	components, paths string
	inner             bool // Big's properties are those of its property inner
}{
	{name: "query", path: `{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Big"}}],"responses":{"200":{"description":"ok"}}}}`},
	{name: "body", path: `{"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Big"}}}},"responses":{"200":{"description":"ok"}}}}`},
	{name: "response", path: `{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Big"}}}}}}}`},
	{name: "nested", path: `{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"array","items":{"type":"object","properties":{"a%[1]d":{"$ref":"#/components/schemas/Big"}}}}}}}}}}`},
	{name: "response-ref", path: `{"get":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}`,
		components: `"responses":{"R":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Big"}}}}}`},
	{name: "parameter-ref", path: `{"get":{"parameters":[{"$ref":"#/components/parameters/Q"}],"responses":{"200":{"description":"ok"}}}}`,
		components: `"parameters":{"Q":{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Big"}}}`},
	{name: "path-item-ref", path: `{"$ref":"#/paths/~1big"}`,
		paths: `"/big":{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Big"}}],"responses":{"200":{"description":"ok"}}}}`},
	// every component schema references Big: components are checked one
	// by one, each a walk of its own
	// a reference to a part of a component: Big's properties are those of
	// its one property, inner
	{name: "part-ref", path: `{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Big/properties/inner"}}],"responses":{"200":{"description":"ok"}}}}`, inner: true},
	{name: "component-refs", path: `{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/S%[1]d"}}}}}}}`},
}

// fanout is a document of shape fanoutShapes[i]: Big of n properties,
// referenced from p paths.
func fanout(i, n, p int) []byte {
	s := fanoutShapes[i]
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Fanout","version":"1"},"components":{"schemas":{"Big":{"type":"object","properties":{`)
	if s.inner {
		b.WriteString(`"inner":{"type":"object","properties":{`)
	}
	for j := range n {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":{"type":"string","maxLength":%d}`, j, j+1)
	}
	if s.inner {
		b.WriteString(`}}`)
	}
	b.WriteString(`}}`)
	if s.name == "component-refs" {
		for j := range p {
			fmt.Fprintf(&b, `,"S%d":{"type":"object","properties":{"big":{"$ref":"#/components/schemas/Big"}}}`, j)
		}
	}
	b.WriteString(`}`)
	if s.components != "" {
		b.WriteString("," + s.components)
	}
	b.WriteString(`},"paths":{`)
	if s.paths != "" {
		b.WriteString(s.paths + ",")
	}
	for j := range p {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":`+s.path, j)
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Fanout","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/fanout/"}}}}`)
	return []byte(b.String())
}

// BenchmarkValidateRefFanout: Validate of valid documents whose one large
// schema is referenced from every path (fanoutShapes), Big of n properties
// and p paths; cpu-ms/MB is the process's CPU per megabyte of document.
func BenchmarkValidateRefFanout(b *testing.B) {
	sizes := []struct{ n, p int }{{2000, 100}, {2000, 1000}}
	for i, s := range fanoutShapes {
		for _, size := range sizes {
			doc := fanout(i, size.n, size.p)
			b.Run(fmt.Sprintf("%s/n%d-p%d", s.name, size.n, size.p), func(b *testing.B) {
				benchValidate(b, doc)
			})
		}
	}
	b.Run("query/n20000-p1000", func(b *testing.B) { benchValidate(b, fanout(0, 20000, 1000)) })
	b.Run("response-headers/n2000-p1000", func(b *testing.B) { benchValidate(b, sharedResponse(2000, 1000, "", "")) })
	b.Run("body-media-types/n2000-p1000", func(b *testing.B) { benchValidate(b, sharedBody(2000, 1000, "")) })
	b.Run("path-item-ref-headers/n2000-p1000", func(b *testing.B) { benchValidate(b, copiedResponse(2000, 1000, "")) })
	// one reference through a path's parts beside the query references
	for c, ch := range fanoutChanges {
		if ch.name == "into-path-after" {
			b.Run("query-into-path/n2000-p1000", func(b *testing.B) { benchValidate(b, fanoutChanged(b, 0, c, 2000, 1000)) })
		}
	}
}

// copiedResponse is a document of a path whose operation's response has n
// headers (the first's text written as header when not empty) and p path
// item references to it.
func copiedResponse(n, p int, header string) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Copied","version":"1"},"paths":{"/big":{"get":{"responses":{"200":{"description":"ok","headers":{`)
	for j := range n {
		if j > 0 {
			b.WriteByte(',')
		}
		if j == 0 && header != "" {
			b.WriteString(`"h0":` + header)
			continue
		}
		fmt.Fprintf(&b, `"h%d":{"schema":{"type":"string"}}`, j)
	}
	b.WriteString(`}}}}}`)
	for j := range p {
		fmt.Fprintf(&b, `,"/p%d":{"$ref":"#/paths/~1big"}`, j)
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Copied","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/copied/"}}}}`)
	return []byte(b.String())
}

// sharedResponse is a document of p paths whose one response is a
// reference to a response of n headers (the first header's text written
// as header when not empty), extra added to the paths.
func sharedResponse(n, p int, header, extra string) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Shared","version":"1"},"components":{"responses":{"R":{"description":"ok","headers":{`)
	for j := range n {
		if j > 0 {
			b.WriteByte(',')
		}
		if j == 0 && header != "" {
			b.WriteString(`"h0":` + header)
			continue
		}
		fmt.Fprintf(&b, `"h%d":{"schema":{"type":"string"}}`, j)
	}
	b.WriteString(`}}}},"paths":{` + extra)
	for j := range p {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":{"get":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}`, j)
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Shared","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/shared/"}}}}`)
	return []byte(b.String())
}

// sharedBody is a document of p paths whose request body is a reference
// to one of n media types (the first's text written as media when not
// empty).
func sharedBody(n, p int, media string) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Shared","version":"1"},"components":{"requestBodies":{"B":{"content":{`)
	for j := range n {
		if j > 0 {
			b.WriteByte(',')
		}
		if j == 0 && media != "" {
			b.WriteString(`"application/x0":` + media)
			continue
		}
		fmt.Fprintf(&b, `"application/x%d":{"schema":{"type":"string"}}`, j)
	}
	b.WriteString(`}}}},"paths":{`)
	for j := range p {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":{"post":{"requestBody":{"$ref":"#/components/requestBodies/B"},"responses":{"200":{"description":"ok"}}}}`, j)
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Shared","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/shared/"}}}}`)
	return []byte(b.String())
}

// TestSharedResponses: a referenced response or request body, valid or
// not, and a path's own problem beside it, get kin-openapi's verdict and
// message.
func TestSharedResponses(t *testing.T) {
	ctx := context.Background()
	bad := `"/a":{"get":{"responses":{"200":{"$ref":"#/components/responses/R"}},"parameters":[{"name":"q","in":"nowhere","schema":{"type":"string"}}]}},`
	for _, c := range []struct {
		name    string
		doc     []byte
		refused bool
	}{
		{"response", sharedResponse(3, 4, "", ""), false},
		{"response-bad-header", sharedResponse(3, 4, `{"schema":{"type":"strin"}}`, ""), true},
		{"response-header-style", sharedResponse(3, 4, `{"style":"form","schema":{"type":"string"}}`, ""), true},
		{"response-path-problem", sharedResponse(3, 4, "", bad), true},
		{"response-missing", []byte(strings.Replace(string(sharedResponse(3, 4, "", "")), `"/p2":{"get":{"responses":{"200":{"$ref":"#/components/responses/R"}`, `"/p2":{"get":{"responses":{"200":{"$ref":"#/components/responses/S"}`, 1)), true},
		{"response-into-path", sharedResponse(3, 4, "", `"/a":{"get":{"responses":{"200":{"$ref":"#/paths/~1z/get/responses/200"}}}},"/z":{"get":{"responses":{"200":{"description":"z","headers":{"h":{"schema":{"type":"string"}}}}}}},`), false},
		{"response-into-path-bad", sharedResponse(3, 4, "", `"/a":{"get":{"responses":{"200":{"$ref":"#/paths/~1z/get/responses/200"}}}},"/z":{"get":{"responses":{"200":{"description":"z","headers":{"h":{"schema":{"type":"strin"}}}}}}},`), true},
		{"copied", copiedResponse(3, 4, ""), false},
		{"copied-bad-header", copiedResponse(3, 4, `{"schema":{"type":"strin"}}`), true},
		{"copied-header-style", copiedResponse(3, 4, `{"style":"form","schema":{"type":"string"}}`), true},
		{"body", sharedBody(3, 4, ""), false},
		{"body-bad-schema", sharedBody(3, 4, `{"schema":{"type":"array"}}`), true},
		{"body-bad-encoding", sharedBody(3, 4, `{"schema":{"type":"object"},"encoding":{"a":{"style":"nowhere"}}}`), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, refused := sameAsKin(t, c.doc); refused != c.refused {
				t.Errorf("refused: %v, want %v (%v)", refused, c.refused, kinValidate(ctx, c.doc))
			}
			root, _ := rawjson.Members(c.doc)
			if got, want := checkWhole(ctx, c.doc, root), kinValidate(ctx, c.doc); errText(got) != errText(want) {
				t.Errorf("checked whole: %v\nkin-openapi alone: %v", got, want)
			}
		})
	}
}

func benchValidate(b *testing.B, doc []byte) {
	b.SetBytes(int64(len(doc)))
	ctx := context.Background()
	start := cpuTime(b)
	for b.Loop() {
		if err := Validate(ctx, doc); err != nil {
			b.Fatal(err)
		}
	}
	cpu := float64(cpuTime(b)-start) / float64(b.N)
	b.ReportMetric(cpu, "cpu-ns/op")
	b.ReportMetric(cpu/1e6/(float64(len(doc))/1e6), "cpu-ms/MB")
}

// fanoutChanges are changes to a fanout document (From replaced by To; To
// added to Big's own members when From is empty), each a reason kin-openapi
// might judge a reference in its context or name another problem first.
var fanoutChanges = []struct {
	name, from, to string
	verdict        verdict
}{
	{"valid", "", "", accepted},
	{"big-bad-type", `"field1":{"type":"string","maxLength":2}`, `"field1":{"type":"strin"}`, refused},
	{"big-read-and-write-only", `"field1":{"type":"string","maxLength":2}`, `"field1":{"type":"string","readOnly":true,"writeOnly":true}`, refused},
	{"big-bad-pattern", `"field1":{"type":"string","maxLength":2}`, `"field1":{"type":"string","pattern":"["}`, refused},
	{"big-bad-default", "", `"default":{"field0":5},`, refused},
	{"big-default", "", `"default":{"field0":"x"},`, accepted},
	{"big-property-bad-default", `"field1":{"type":"string","maxLength":2}`, `"field1":{"type":"string","maxLength":2,"default":"abc"}`, refused},
	{"big-self", "", `"additionalProperties":{"$ref":"#/components/schemas/Big"},`, accepted},
	{"big-self-bad", `"field1":{"type":"string","maxLength":2}`, `"field1":{"type":"object","properties":{"again":{"$ref":"#/components/schemas/Big"},"x":{"type":"array"}}}`, refused},
	{"big-unresolved", `"field1":{"type":"string","maxLength":2}`, `"field1":{"$ref":"#/components/schemas/Nope"}`, refused},
	{"big-discriminator", "", `"discriminator":{"propertyName":"field0","mapping":{"a":"#/components/schemas/Big"}},`, accepted},
	{"big-one-of", "", `"oneOf":[{"$ref":"#/components/schemas/Small"},{"type":"object"}],`, accepted},
	{"small-bad", `"Big":{`, `"Small":{"type":"integer","minimum":"x"},"Big":{`, refused},
	{"default-through-ref", `"Big":{`, `"D":{"type":"object","default":{"big":{"field0":7}},"properties":{"big":{"$ref":"#/components/schemas/Big"}}},"Big":{`, refused},
	{"default-through-ref-ok", `"Big":{`, `"D":{"type":"object","default":{"big":{"field0":"s"}},"properties":{"big":{"$ref":"#/components/schemas/Big"}}},"Big":{`, accepted},
	{"default-one-of", `"Big":{`, `"D":{"oneOf":[{"$ref":"#/components/schemas/Big"},{"type":"object","properties":{"field0":{"type":"string"}}}],"default":{"field0":"s"}},"Big":{`, refused},
	{"default-not", `"Big":{`, `"D":{"not":{"$ref":"#/components/schemas/Big"},"default":{"field0":"s"}},"Big":{`, refused},
	{"deep-ref", `"paths":{`, `"paths":{"/deep":{"get":{"parameters":[{"name":"d","in":"query","schema":{"$ref":"#/components/schemas/Big/properties/field0"}}],"responses":{"200":{"description":"ok"}}}},`, accepted},
	{"path-bad-in", `"paths":{`, `"paths":{"/zz":{"get":{"parameters":[{"name":"q","in":"nowhere","schema":{"$ref":"#/components/schemas/Big"}}],"responses":{"200":{"description":"ok"}}}},`, refused},
	{"path-bad-style", `"paths":{`, `"paths":{"/zz":{"get":{"parameters":[{"name":"q","in":"query","style":"matrix","schema":{"$ref":"#/components/schemas/Big"}}],"responses":{"200":{"description":"ok"}}}},`, refused},
	{"path-bad-inline", `"paths":{`, `"paths":{"/a0":{"get":{"parameters":[{"name":"q","in":"query","schema":{"type":"object","properties":{"b":{"$ref":"#/components/schemas/Big"},"c":{"type":"array"}}}}],"responses":{"200":{"description":"ok"}}}},`, refused},
	{"path-default-through-ref", `"paths":{`, `"paths":{"/a0":{"get":{"parameters":[{"name":"q","in":"query","schema":{"type":"object","default":{"b":{"field1":"long"}},"properties":{"b":{"$ref":"#/components/schemas/Big"}}}}],"responses":{"200":{"description":"ok"}}}},`, refused},
	{"path-unresolved", `"paths":{`, `"paths":{"/zz":{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Nope"}}],"responses":{"200":{"description":"ok"}}}},`, refused},
	{"path-external", `"paths":{`, `"paths":{"/zz":{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"other.json#/Big"}}],"responses":{"200":{"description":"ok"}}}},`, refused},
	{"path-response-missing", `"paths":{`, `"paths":{"/zz":{"get":{"responses":{"200":{"$ref":"#/components/responses/Nope"}}}},`, refused},
	{"path-to-alias", `"Big":{`, `"Alias":{"$ref":"#/components/schemas/Big"},"Big":{`, accepted},
	{"into-path-after", `"paths":{`, `"paths":{"/zz":{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/paths/~1p0/get/parameters/0/schema/properties/field0"}}],"responses":{"200":{"description":"ok"}}}},`, either},
	{"into-path-before", `"paths":{`, `"paths":{"/a":{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/paths/~1p0/get/parameters/0/schema/properties/field0"}}],"responses":{"200":{"description":"ok"}}}},`, either},
	{"into-path-item", `"paths":{`, `"paths":{"/a":{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":"#/paths/~1p0/get/parameters/0/schema"}}],"responses":{"200":{"description":"ok"}}}},`, either},
	{"component-into-path", `"Big":{`, `"C":{"type":"object","properties":{"x":{"$ref":"#/paths/~1p0/get/parameters/0/schema"}}},"Big":{`, either},
	{"component-through-ref-before", `"Big":{`, `"A":{"type":"object","properties":{"x":{"$ref":"#/components/schemas/Z/properties/y/properties/field0"}}},"Z":{"type":"object","properties":{"y":{"$ref":"#/components/schemas/Big"}}},"Big":{`, refused},
	{"component-through-ref-after", `"Big":{`, `"ZZ":{"type":"object","properties":{"x":{"$ref":"#/components/schemas/Z/properties/y/properties/field0"}}},"Z":{"type":"object","properties":{"y":{"$ref":"#/components/schemas/Big"}}},"Big":{`, accepted},
	{"component-problem-order", `"Big":{`, `"A":{"type":"object","properties":{"b":{"$ref":"#/components/schemas/Bad"}}},"Ab":{"type":"object","properties":{"q":{"$ref":"#/components/schemas/Nope2"}}},"Bad":{"type":"object","properties":{"q":{"$ref":"#/components/schemas/Nope1"}}},"Big":{`, refused},
	{"header-problem-order", `"components":{"schemas":{`, `"components":{"headers":{"H":{"schema":{"$ref":"#/components/schemas/Bad"}}},"schemas":{"A":{"type":"object","properties":{"q":{"$ref":"#/components/schemas/Nope2"}}},"Bad":{"type":"object","properties":{"q":{"$ref":"#/components/schemas/Nope1"}}},`, refused},
}

// verdict is a document's, as a test expects it.
type verdict int8

const (
	accepted verdict = iota
	refused
	either // as the shape has it: a reference into a path's parts, found in some shapes only
)

// fanoutChanged is fanout(i, n, p) changed by fanoutChanges[c].
func fanoutChanged(t testing.TB, i, c, n, p int) []byte {
	doc := string(fanout(i, n, p))
	doc = strings.Replace(doc, `"Big":{`, `"Small":{"type":"string"},"Big":{`, 1)
	ch := fanoutChanges[c]
	from, to := ch.from, ch.to
	if from == "" && to != "" {
		from, to = `"Big":{`, `"Big":{`+to
	}
	changed := strings.Replace(doc, from, to, 1)
	if changed == doc && from != "" {
		t.Fatalf("%s: %q is not in the document", ch.name, from)
	}
	return []byte(changed)
}

// TestRefFanout: small documents of each fanout shape, with each change,
// get kin-openapi's verdict and message, checked in batches and whole.
func TestRefFanout(t *testing.T) {
	ctx := context.Background()
	for i, s := range fanoutShapes {
		for c, ch := range fanoutChanges {
			t.Run(s.name+"/"+ch.name, func(t *testing.T) {
				doc := fanoutChanged(t, i, c, 3, 4)
				if _, got := sameAsKin(t, doc); ch.verdict != either && !s.inner && got != (ch.verdict == refused) {
					t.Errorf("refused: %v, want %v (%v)", got, ch.verdict == refused, kinValidate(ctx, doc))
				}
				root, _ := rawjson.Members(doc)
				if got, want := checkWhole(ctx, doc, root), kinValidate(ctx, doc); errText(got) != errText(want) {
					t.Errorf("checked whole: %v\nkin-openapi alone: %v", got, want)
				}
			})
		}
	}
}

// FuzzRefFanout compares Validate, in batches and whole, with kin-openapi
// alone on the fanout documents with each change, the first reference to
// Big written as ref and Big's first property given dflt as its default
// (when dflt is JSON).
func FuzzRefFanout(f *testing.F) {
	f.Add(uint8(0), uint8(0), "#/components/schemas/Big", `""`)
	f.Add(uint8(3), uint8(14), "#/components/schemas/Big/properties/field1", `{"a":1}`)
	f.Add(uint8(7), uint8(22), "#/paths/~1p1/get/parameters/0/schema", `5`)
	f.Add(uint8(4), uint8(29), "#/components/schemas/Small", `null`)
	f.Fuzz(func(t *testing.T, shape, change uint8, ref, dflt string) {
		doc := string(fanoutChanged(t, int(shape)%len(fanoutShapes), int(change)%len(fanoutChanges), 2, 3))
		doc = strings.Replace(doc, `"$ref":"#/components/schemas/Big"`, `"$ref":`+string(rawjson.Quote(ref)), 1)
		if json.Valid([]byte(dflt)) {
			doc = strings.Replace(doc, `"maxLength":1}`, `"maxLength":1,"default":`+dflt+`}`, 1)
		}
		body, err := Parse([]byte(doc), false)
		if err != nil {
			return
		}
		sameAsKin(t, body)
		ctx := context.Background()
		root, _ := rawjson.Members(body)
		if got, want := checkWhole(ctx, body, root), kinValidate(ctx, body); errText(got) != errText(want) {
			t.Errorf("checked whole: %v\nkin-openapi alone: %v\ndocument: %s", got, want, body)
		}
	})
}

// TestPartRefs: references from paths to parts of a component schema,
// each of the ways a part is found and some it is not, get kin-openapi's
// verdict and message (presetter.part reads what the loader reads).
func TestPartRefs(t *testing.T) {
	ctx := context.Background()
	for _, ref := range []string{
		"#/components/schemas/S/properties/a/items/allOf/1",
		"#/components/schemas/S/properties/a/items/allOf/01",
		"#/components/schemas/S/properties/a/items/allOf/-1",
		"#/components/schemas/S/properties/a/items/allOf/+1",
		"#/components/schemas/S/properties/a/items/allOf/2",
		"#/components/schemas/S/properties/a/items/anyOf/0",
		"#/components/schemas/S/properties/a/items/oneOf/0",
		"#/components/schemas/S/properties/a/items/not",
		"#/components/schemas/S/properties/a/items/allOf/1/maxLength",
		"#/components/schemas/S/properties/m/additionalProperties",
		"#/components/schemas/S/properties/n/additionalProperties",
		"#/components/schemas/S/properties/zz",
		"#/components/schemas/S/properties",
		"#/components/schemas/S/properties/a~1b",
		"#/components/schemas/S/properties/a%7E1b",
		"#/components/schemas/S/properties/r/properties/x",
		"#/components/schemas/S/properties/r/items",
		"#/components/schemas/T/description",
		"#/components/schemas/U/items",
		"#/components/schemas/U/properties/x",
	} {
		t.Run(ref, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"components":{"schemas":{` +
				`"S":{"type":"object","properties":{"a":{"type":"array","items":{"allOf":[{"type":"string"},{"$ref":"#/components/schemas/T"}],"anyOf":[{"type":"string"}],"oneOf":[{"type":"string","minLength":2}]}},` +
				`"m":{"type":"object","additionalProperties":{"type":"integer"}},"n":{"type":"object","additionalProperties":true},"a/b":{"type":"boolean"},"r":{"$ref":"#/components/schemas/U"}}},` +
				`"T":{"type":"string","maxLength":3},"U":{"type":"object","properties":{"x":{"type":"number"}},"items":{"type":"string"}}}},"paths":{`)
			for j := range 3 {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"/p%d":{"get":{"parameters":[{"name":"q","in":"query","schema":{"$ref":%s}}],"responses":{"200":{"description":"ok"}}}}`, j, rawjson.Quote(ref))
			}
			b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"t","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/t/"}}}}`)
			doc := []byte(b.String())
			sameAsKin(t, doc)
			root, _ := rawjson.Members(doc)
			if got, want := checkWhole(ctx, doc, root), kinValidate(ctx, doc); errText(got) != errText(want) {
				t.Errorf("checked whole: %v\nkin-openapi alone: %v", got, want)
			}
		})
	}
}

// TestPathRefCopies: path item references resolved after the items
// written in place (resolveRefs), with problems in several paths in either
// order, references before and after their targets and chains, get
// kin-openapi's verdict and message.
func TestPathRefCopies(t *testing.T) {
	ctx := context.Background()
	ok := `{"get":{"responses":{"200":{"description":"ok","headers":{"h":{"schema":{"$ref":"#/components/schemas/S"}}}}}}}`
	bad := func(name string) string {
		return `{"get":{"responses":{"200":{"description":"ok","headers":{"h":{"schema":{"$ref":"#/components/schemas/` + name + `"}}}}}}}`
	}
	for _, c := range []struct {
		name, paths string
		refused     bool
	}{
		{"copies", `"/a":{"$ref":"#/paths/~1z"},"/m":` + ok + `,"/z":` + ok, false},
		{"copy before target, target bad, another bad between", `"/a":{"$ref":"#/paths/~1z"},"/m":` + bad("Nope1") + `,"/z":` + bad("Nope2"), true},
		{"copy after target, target bad, another bad before", `"/b":` + bad("Nope1") + `,"/m":` + bad("Nope2") + `,"/z":{"$ref":"#/paths/~1m"}`, true},
		{"copy's own operation bad", `"/a":{"$ref":"#/paths/~1z","post":{"responses":{"200":{"description":"ok","headers":{"h":{"schema":{"$ref":"#/components/schemas/Nope1"}}}}}}},"/m":` + bad("Nope2") + `,"/z":` + ok, true},
		{"chain", `"/a":{"$ref":"#/paths/~1b"},"/b":{"$ref":"#/paths/~1c"},"/c":` + ok + `,"/d":{"$ref":"#/paths/~1a"}`, false},
		{"copy of a missing path", `"/a":{"$ref":"#/paths/~1nowhere"},"/m":` + bad("Nope2"), true},
		{"copy of a valid target, another bad", `"/a":{"$ref":"#/paths/~1z"},"/m":` + bad("Nope2") + `,"/z":` + ok, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"components":{"schemas":{"S":{"type":"string"}}},"paths":{` + c.paths +
				`},"x-tyk-api-gateway":{"info":{"name":"t","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/t/"}}}}`)
			if _, refused := sameAsKin(t, doc); refused != c.refused {
				t.Errorf("refused: %v, want %v (%v)", refused, c.refused, kinValidate(ctx, doc))
			}
			root, _ := rawjson.Members(doc)
			if got, want := checkWhole(ctx, doc, root), kinValidate(ctx, doc); errText(got) != errText(want) {
				t.Errorf("checked whole: %v\nkin-openapi alone: %v", got, want)
			}
		})
	}
}
