package oasdoc

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// partFanout is a document whose one large schema (n properties) lies in a
// part of an entry, at big (a path item's parameter or a parameter
// component), referenced through ref from p paths; key is the reference's
// key as written.
func partFanout(n, p int, big, key, ref string) []byte {
	var props strings.Builder
	for j := range n {
		if j > 0 {
			props.WriteByte(',')
		}
		fmt.Fprintf(&props, `"field%d":{"type":"string","maxLength":%d}`, j, j+1)
	}
	param := `{"name":"q","in":"query","schema":{"type":"object","properties":{` + props.String() + `}}}`
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"F","version":"1"},`)
	switch big {
	case "component":
		b.WriteString(`"components":{"parameters":{"Q":` + param + `}},`)
	case "path through component": // the path's parameter references the schema
		b.WriteString(`"components":{"schemas":{"Big":{"type":"object","properties":{` + props.String() + `}}}},`)
		param = `{"name":"q","in":"query","schema":{"$ref":"#/components/schemas/Big"}}`
		big = "path"
	}
	b.WriteString(`"paths":{`)
	if big == "path" {
		b.WriteString(`"/big":{"get":{"parameters":[` + param + `],"responses":{"200":{"description":"ok"}}}},`)
	}
	for j := range p {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":{"get":{"parameters":[{"name":"q","in":"query","schema":{%s:"%s"}}],"responses":{"200":{"description":"ok"}}}}`, j, key, ref)
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"F","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/f/"}}}}`)
	return []byte(b.String())
}

// TestExpansion: a document whose references into parts of entries kin-openapi
// walks again at every use would be walked as many times its size is
// refused, however the reference is written; documents whose references
// are resolved once (whole components, parts of component schemas, path
// item references alone), and small ones, are taken as before.
func TestExpansion(t *testing.T) {
	const refused = "references into parts of path items or of components other than schemas"
	for _, c := range []struct {
		name string
		doc  []byte
		want string // "" for accepted
	}{
		{"path part x1000", partFanout(2000, 1000, "path", `"$ref"`, "#/paths/~1big/get/parameters/0/schema"), refused},
		{"path part x1000, key escaped", partFanout(2000, 1000, "path", `"\u0024ref"`, "#/paths/~1big/get/parameters/0/schema"), refused},
		{"path part x1000, percent-encoded", partFanout(2000, 1000, "path", `"$ref"`, "#/paths/%7E1big/get/parameters/0/schema"), refused},
		{"path part through a component x1000", partFanout(2000, 1000, "path through component", `"$ref"`, "#/paths/~1big/get/parameters/0/schema"), refused},
		{"parameter part x1000", partFanout(2000, 1000, "component", `"$ref"`, "#/components/parameters/Q/schema"), refused},
		{"path part x10", partFanout(2000, 10, "path", `"$ref"`, "#/paths/~1big/get/parameters/0/schema"), ""},
		{"path part through a component x10", partFanout(2000, 10, "path through component", `"$ref"`, "#/paths/~1big/get/parameters/0/schema"), ""},
		{"parameter part x10", partFanout(2000, 10, "component", `"$ref"`, "#/components/parameters/Q/schema"), ""},
		{"unresolved part x1000", partFanout(2000, 1000, "path", `"$ref"`, "#/paths/~1none/get/parameters/0/schema"), "~1none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc, err := Parse(c.doc, false)
			if err == nil {
				err = Validate(context.Background(), doc)
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
	// every fanout shape, resolved once, is taken at its benchmark's size
	for i, s := range fanoutShapes {
		if _, err := Parse(fanout(i, 2000, 1000), false); err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
	}
	if _, err := Parse(copiedResponse(2000, 1000, ""), false); err != nil {
		t.Errorf("path item references to a large operation: %v", err)
	}
}

// BenchmarkExpansionLimit: Validate of the documents of path part
// references just under the bound (TestExpansion's shapes): what one
// document may still cost.
func BenchmarkExpansionLimit(b *testing.B) {
	for _, c := range []struct {
		name, big, ref string
		n              int
	}{
		{"path-part", "path", "#/paths/~1big/get/parameters/0/schema", 2000},
		{"parameter-part", "component", "#/components/parameters/Q/schema", 2000},
		{"path-part-through-component", "path through component", "#/paths/~1big/get/parameters/0/schema", 2000},
		{"path-part-20k", "path", "#/paths/~1big/get/parameters/0/schema", 20000},
	} {
		// the most references Parse takes
		p := 1
		for {
			if _, err := Parse(partFanout(c.n, p*2, c.big, `"$ref"`, c.ref), false); err != nil {
				break
			}
			p *= 2
		}
		for step := p / 2; step > 0; step /= 2 {
			if _, err := Parse(partFanout(c.n, p+step, c.big, `"$ref"`, c.ref), false); err == nil {
				p += step
			}
		}
		doc := partFanout(c.n, p, c.big, `"$ref"`, c.ref)
		b.Run(fmt.Sprintf("%s/n%d-p%d", c.name, c.n, p), func(b *testing.B) { benchValidate(b, doc) })
	}
}
