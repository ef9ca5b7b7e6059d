package oasdoc

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trickyJSON are JSON texts whose pieces could differ from the whole
// conversion: keys twice (at the top, among the paths, among a section's
// entries, spelled with escapes), keys holding braces, a key over YAML's
// 1,024 characters, empty objects at the split levels, tabs and carriage
// returns, numbers and strings YAML could read otherwise, invalid UTF-8.
var trickyJSON = []string{
	`{"openapi":"3.0.3","paths":{"/a":{},"/a":{}}}`,
	`{"paths":{"/a":{}},"paths":{"/b":{}}}`,
	`{"paths":{"/a":{}},"pa\u0074hs":{"/b":{}}}`,
	`{"components":{"schemas":{"S":{"type":"string"},"\u0053":{}}}}`,
	`{"components":{"schemas":{},"responses":{"R":{"description":"d"}}}}`,
	`{"paths":{}, "components":{}}`,
	`{"a{":{"b}":"{"},"paths":{"/{id}":{"get":{"x":"}}"}}}}`,
	`{"paths":{"/` + strings.Repeat("p", 1100) + `":{}}}`,
	`{"` + strings.Repeat("k", 1100) + `":1,"paths":{"/a":{}}}`,
	"{\"paths\":{\"/a\":{},\n\t\"/b\":{}}}",
	"{\"paths\":{\"/a\":{},\r\n\"/b\":{}}}",
	`{"n":[1e400,9007199254740993,-0,0.10],"s":["yes","on","~","null",".inf","0x1F","2001-01-01"]}`,
	"{\"paths\":{\"/a\xff\":{}}}",
	`{"x-tyk-api-gateway":{"middleware":{"operations":{"a":{"allow":{"enabled":true}},"a":{}}}}}`,
	`{"x-tyk-api-gateway":{"middleware":{"operations":{"a":{"allow":{"enabled":true}},"b":{"block":{}}},"global":{}}}}`,
	`{"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}},"paths ":1}`,
	"{\n  \"paths\" : {\n    \"/a\" : { }\n  , \"/b\" : [ ]\n  }\n}\n",
	`{"paths":{"/a":{"$ref":"#/x"}},"x":{"get":{}}}`,
	`{"k":"line\nbreak","paths":{"/a":{"description":"` + strings.Repeat("long ", 300) + `"}}}`,
	`{}`, `{"a":{}}`, `[{"paths":{}}]`,
}

// jsonDocuments are the project's documents as JSON text, compact and
// indented, and trickyJSON.
func jsonDocuments(t *testing.T) map[string][]byte {
	docs := map[string][]byte{}
	for i, d := range trickyJSON {
		docs["tricky "+string(rune('a'+i))] = []byte(d)
	}
	files, _ := filepath.Glob("../convert/testdata/golden/*.json")
	more, _ := filepath.Glob("testdata/export*.json")
	for _, f := range append(files, more...) {
		j, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = j
		var compact bytes.Buffer
		if err := json.Compact(&compact, j); err != nil {
			t.Fatal(err)
		}
		docs[f+" compact"] = compact.Bytes()
	}
	docs["large"] = large(30)
	docs["rich"] = []byte(rich)
	return docs
}

// TestJSONPieces: JSON text converted in pieces gives the whole
// conversion's bytes; the project's documents are converted in pieces.
func TestJSONPieces(t *testing.T) {
	defer func(n int) { yamlPiecewiseFrom = n }(yamlPiecewiseFrom)
	yamlPiecewiseFrom = 0
	for name, j := range jsonDocuments(t) {
		whole, err := yamlWhole(j)
		pieces, ok := piecesBatched(j, jsonPiecewise)
		if ok && (err != nil || !bytes.Equal(pieces, whole)) {
			t.Errorf("%s: in pieces %s\nwhole %s (%v)\n%s", name, pieces, whole, err, j)
		}
		if !ok && !strings.HasPrefix(name, "tricky") {
			t.Errorf("%s: not converted in pieces", name)
		}
	}
}

// FuzzJSONPieces: any text converted in pieces gives the whole
// conversion's bytes.
func FuzzJSONPieces(f *testing.F) {
	for _, d := range trickyJSON {
		f.Add([]byte(d))
	}
	f.Add([]byte(rich))
	f.Fuzz(func(t *testing.T, j []byte) {
		defer func(n int) { yamlPiecewiseFrom = n }(yamlPiecewiseFrom)
		yamlPiecewiseFrom = 0
		pieces, ok := piecesBatched(j, jsonPiecewise)
		if !ok {
			return
		}
		whole, err := yamlWhole(j)
		if err != nil || !bytes.Equal(pieces, whole) {
			t.Fatalf("in pieces %s\nwhole %s (%v)", pieces, whole, err)
		}
	})
}
