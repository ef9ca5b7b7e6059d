package oasdoc

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
)

// realNodes counts the nodes the YAML decoder builds.
func realNodes(t *testing.T, src []byte) int {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		t.Fatal(err)
	}
	var count func(n *yaml.Node) int
	count = func(n *yaml.Node) int {
		c := 1
		for _, k := range n.Content {
			c += count(k)
		}
		return c
	}
	return count(&root) - 1 // the document node holds no value
}

// TestYAMLNodesFromAbove: the pre-scan's count is never below the nodes
// the decoder builds, and not far above them, for documents in block and
// flow style, with quotes, comments and block scalars.
func TestYAMLNodesFromAbove(t *testing.T) {
	docs := map[string]string{
		"block":   "openapi: 3.0.3\ninfo:\n  title: t # a comment: with, commas\n  version: '1: 0'\npaths:\n  /a:\n    get:\n      tags:\n        - x\n        - y\n",
		"flow":    "a: [1, 2, {b: c, d: [e, f]}]\n",
		"quoted":  "a: \"x: [y, z]\"\nb: 'it''s, fine'\n",
		"literal": "a: |\n  line one: with, commas [and] {braces}\n  - not an item\nb: 1\n",
		"seqmap":  "- a: 1\n  b: 2\n- c: 3\n",
	}
	for _, f := range []string{"export.yaml", "export-public.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = string(b)
	}
	for name, doc := range docs {
		got, real := yamlNodes([]byte(doc)), realNodes(t, []byte(doc))
		if got < real || got > 2*real+4 {
			t.Errorf("%s: counted %d nodes, the decoder builds %d", name, got, real)
		}
	}
}

// TestYAMLTooManyNodes: a document of more than jsonstrict.MaxValues tiny
// items is refused, naming the limit, before it is decoded.
func TestYAMLTooManyNodes(t *testing.T) {
	for name, doc := range map[string][]byte{
		"block": append([]byte("openapi: 3.0.3\nx:\n"), bytes.Repeat([]byte("- a\n"), jsonstrict.MaxValues)...),
		"flow":  []byte("openapi: 3.0.3\nx: [" + strings.Repeat("a,", jsonstrict.MaxValues) + "a]\n"),
	} {
		_, err := YAMLToJSON(doc)
		if err == nil || !strings.Contains(err.Error(), "more than 1000000 nodes") {
			t.Errorf("%s: %v, want the node limit named", name, err)
		}
	}
}
