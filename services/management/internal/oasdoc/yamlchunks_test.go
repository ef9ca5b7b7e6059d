package oasdoc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// trickyYAML are documents whose pieces could be cut wrongly: each must be
// converted in pieces to exactly the whole conversion's JSON, or not at
// all.
var trickyYAML = []string{
	// block scalars holding what looks like keys and comments
	"openapi: 3.0.3\ninfo:\n  title: T\n  description: |\n    paths:\n    /x: y\n    # not a comment\n\n  version: '1'\npaths:\n  /a:\n    get:\n      description: >-\n        /b:\n          get: {}\n\n      responses: {}\n  /c:\n    get: {responses: {}}\n",
	// a quoted scalar running over an entry's line: converted whole
	"paths:\n  /a:\n    get:\n      description: \"one\n  /b: two\"\n  /c: {}\n",
	"paths:\n  /a: 'x\n  /b: y'\n",
	// a flow collection over lines
	"paths:\n  /a: {get: {responses: {}},\n    put: {}}\n  /b: [1,\n  2]\n",
	// anchors within one path and across paths
	"paths:\n  /a:\n    get: &op\n      responses: {}\n    put: *op\n  /b:\n    get: *op\n",
	"paths:\n  /a:\n    get: &op\n      responses: {}\n    put: *op\n  /b:\n    get: {}\n",
	// the extension's middleware.operations, split per operation: anchors
	// across operations, a key twice at each level, other middleware beside
	// them, a flow or quoted key, a block scalar holding key-like lines
	"x-tyk-api-gateway:\n  info: {name: n}\n  middleware:\n    global: {cors: {enabled: true}}\n    operations:\n      getA:\n        allow: &al {enabled: true}\n      getB:\n        allow: *al\n",
	"x-tyk-api-gateway:\n  middleware:\n    operations:\n      getA:\n        allow: {enabled: true}\n      getA:\n        block: {enabled: true}\n",
	"x-tyk-api-gateway:\n  middleware:\n    operations:\n      getA: {}\n  middleware:\n    operations: {}\n",
	"x-tyk-api-gateway:\n  middleware:\n    operations:\n      getA:\n        mockResponse:\n          body: |\n            getB:\n              x: 1\n      'getB':\n        allow: {enabled: false}\n      \"get C\": {}\n",
	"x-tyk-api-gateway:\n  middleware:\n    operations: {getA: {allow: {enabled: true}}}\n  server:\n    listenPath: {value: /a/}\nx-tyk-api-gateway:\n  info: {}\n",
	"x-tyk-api-gateway:\n  middleware:\n    operations:\n    - getA\n",
	// a document start marker: on its own first, or then a second document,
	// content after it, a directive before it, a marker later
	"---\nopenapi: 3.0.3\npaths:\n  /a:\n    get: {}\n  /b: {}\n",
	"# c\n---   \npaths:\n  /a: {}\n",
	"---\npaths:\n  /a: {}\n---\npaths:\n  /b: {}\n",
	"--- {paths: {}}\n",
	"--- !!map\npaths:\n  /a: {}\n",
	"%YAML 1.2\n---\npaths:\n  /a: {}\n",
	"paths:\n  /a: {}\n---\n",
	"---\n",
	"---\n---\npaths:\n  /a: {}\n",
	// a key twice, at the top and among the paths
	"paths:\n  /a: {}\n  /a: {}\n",
	"info: {}\npaths:\n  /a: {}\ninfo: {}\n",
	"paths: {}\npaths:\n  /a: {}\n",
	// comments, blank lines, CRLF, indentation of 4, quoted keys
	"# head\n\nopenapi: 3.0.3 # c\r\npaths:\r\n    # first\r\n    \"/a/{id}\":\r\n        get: {}\r\n\r\n    '/b #x':\r\n      get: {}\r\n# tail\r\n",
	// plain scalars over lines, numbers, booleans, nulls, odd keys
	"info:\n  title: a long\n    title\n  x: 0x1F\n  y: 1e3\n  z: ~\npaths:\n  /a:\n    get:\n      summary: one\n        two\n      x-n: [1.5, .5]\n  /b: yes\n",
	// what is not split
	"---\npaths:\n  /a: {}\n", "%YAML 1.2\n---\npaths: {}\n", "? paths\n: {}\n", "- a\n- b\n", "{paths: {}}\n",
	"paths:\n- a\n", "paths:\n  - a\n", "paths:\n\t/a: {}\n", "paths:\n  /a: {}\n /b: {}\n", "paths:\n  ? /a\n  : {}\n",
	"\xef\xbb\xbfpaths:\n  /a: {}\n", "openapi: 3\npaths:\n  /a: {}\n---\nx: 1\n", "paths:\n  /a: {}\nbad\n", "paths: # c\n  /a: {}\n",
	"paths:\n", "paths:\n  # only a comment\n", "x: 1\n", "",
	// components split by section and entry
	"components:\n  schemas:\n    A:\n      type: string\n    B: {type: integer}\n  # c\n  responses:\n    R:\n      description: |\n        x\n  securitySchemes: {}\npaths: {}\n",
	"components:\n  schemas:\n    A: &a {type: string}\n    B: *a\n  responses:\n    R: *a\n",
	"components:\n  schemas:\n    A: {}\n  schemas:\n    B: {}\n", "components:\n  schemas:\n    A: {}\n    A: {}\n",
	"components:\n  schemas:\n  - A\n", "components:\n  \"schemas\":\n    A: {}\n", "components:\n  schemas:\n",
	// merge keys and deep nesting are refused as a whole document refuses them
	"paths:\n  /a:\n    <<: {get: {}}\n  /b: {}\n",
}

// yamlDocuments are the tricky documents and the project's OAS documents
// (the golden conversions and the export fixtures) written as YAML by the
// project's emitter and by the YAML library at two indentations.
func yamlDocuments(t *testing.T) map[string][]byte {
	docs := map[string][]byte{}
	for i, d := range trickyYAML {
		docs["tricky "+string(rune('a'+i))] = []byte(d)
	}
	files, _ := filepath.Glob("../convert/testdata/golden/*.json")
	more, _ := filepath.Glob("testdata/export*.json")
	for _, f := range append(files, more...) {
		j, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var wrapped struct {
			Base json.RawMessage `json:"base"`
		}
		if json.Unmarshal(j, &wrapped) == nil && len(wrapped.Base) > 0 {
			j = wrapped.Base // a golden conversion: its OAS document
		}
		y, err := JSONToYAML(j)
		if err != nil {
			t.Fatal(err)
		}
		docs[f+" emitted"] = y
		docs[f+" emitted, marked"] = append([]byte("---\n"), y...)
		var v yaml.Node
		if err := yaml.Unmarshal(j, &v); err != nil {
			t.Fatal(err)
		}
		restyle(&v)
		for _, indent := range []int{2, 4} {
			var b bytes.Buffer
			enc := yaml.NewEncoder(&b)
			enc.SetIndent(indent)
			if err := enc.Encode(&v); err != nil {
				t.Fatal(err)
			}
			docs[f+" marshalled "+string(rune('0'+indent))] = b.Bytes()
		}
	}
	return docs
}

// restyle turns a JSON-parsed node tree into block style, scalars plain
// where they can be, long strings as literal block scalars.
func restyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && len(n.Value) > 40 {
		n.Style = yaml.LiteralStyle
	}
	for _, c := range n.Content {
		restyle(c)
	}
}

// TestYAMLPiecewise: every document converted in pieces gives the whole
// conversion's bytes; the project's documents are converted in pieces.
func TestYAMLPiecewise(t *testing.T) {
	defer func(n int) { yamlPiecewiseFrom = n }(yamlPiecewiseFrom)
	yamlPiecewiseFrom = 0
	defer func(n int) { pieceBatch = n }(pieceBatch)
	piecewise := 0
	for name, y := range yamlDocuments(t) {
		whole, err := yamlWhole(y)
		pieces, ok := yamlPiecewiseBatched(y)
		if ok && (err != nil || !bytes.Equal(pieces, whole)) {
			t.Errorf("%s: in pieces %s\nwhole %s (%v)\n%s", name, pieces, whole, err, y)
		}
		if ok {
			piecewise++
		} else if !strings.HasPrefix(name, "tricky") && strings.Contains(string(y), "\npaths:\n") {
			t.Errorf("%s: not converted in pieces:\n%s", name, y)
		}
	}
	if piecewise < 40 {
		t.Errorf("only %d documents converted in pieces", piecewise)
	}
}

// FuzzYAMLPieces: a document converted in pieces is one the whole
// conversion accepts, with the same JSON. Run it with
// go test -run '^$' -fuzz FuzzYAMLPieces -fuzztime 2m ./services/management/internal/oasdoc/
func FuzzYAMLPieces(f *testing.F) {
	for _, d := range trickyYAML {
		f.Add([]byte(d))
	}
	f.Add([]byte("openapi: 3.0.3\npaths:\n  /a:\n    get:\n      responses:\n        '200': {description: ok}\n  /b:\n    $ref: '#/x'\n"))
	f.Fuzz(func(t *testing.T, y []byte) {
		defer func(n int) { yamlPiecewiseFrom = n }(yamlPiecewiseFrom)
		yamlPiecewiseFrom = 0
		defer func(n int) { pieceBatch = n }(pieceBatch)
		pieces, ok := yamlPiecewiseBatched(y)
		if !ok {
			return
		}
		whole, err := yamlWhole(y)
		if err != nil || !bytes.Equal(pieces, whole) {
			t.Fatalf("in pieces %s\nwhole %s (%v)", pieces, whole, err)
		}
		if !json.Valid(pieces) {
			t.Fatalf("not JSON: %s", pieces)
		}
	})
}

// yamlPiecewiseBatched is yamlPiecewise with every entry apart (pieceBatch
// 0), then in batches of 100 bytes and of the default size: the answer of
// the first that differs from the entries apart (a difference the callers
// report against the whole conversion), else theirs.
func yamlPiecewiseBatched(y []byte) ([]byte, bool) {
	return piecesBatched(y, yamlPiecewise)
}

func piecesBatched(src []byte, convert func([]byte) ([]byte, bool)) ([]byte, bool) {
	defer func(n int) { pieceBatch = n }(pieceBatch)
	pieceBatch = 0
	apart, apartOK := convert(src)
	for _, batch := range []int{100, 4 << 10} {
		pieceBatch = batch
		if out, ok := convert(src); ok && (!apartOK || !bytes.Equal(out, apart)) {
			if apartOK { // both read it, differently: one is wrong
				return append(out, "differs from the entries apart"...), true
			}
			return out, ok
		}
	}
	return apart, apartOK
}
