package oasdoc

import (
	"fmt"
	"strings"
	"testing"
)

// smallPaths is a valid Tyk OAS document of n paths of one operation each
// (ops operations on the first path's item beyond that are not possible:
// a path item has at most one operation per method), the shape of the
// 11.5 MB, 190,000-path document that once took about 500 MiB to check.
func smallPaths(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Many","version":"1"},"paths":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":{"get":{"responses":{"200":{"description":"ok"}}}}`, i)
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Many","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/many/"}}}}`)
	return []byte(b.String())
}

// manyOperations is a document of n paths with every method on each.
func manyOperations(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"Many","version":"1"},"paths":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":{`, i)
		for j, m := range []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"} {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%s":{"responses":{"200":{"description":"ok"}}}`, m)
		}
		b.WriteByte('}')
	}
	b.WriteString(`},"x-tyk-api-gateway":{"info":{"name":"Many","state":{"active":true}},"upstream":{"url":"http://u/"},"server":{"listenPath":{"value":"/many/"}}}}`)
	return []byte(b.String())
}

// TestCounts: a document of at most MaxPaths paths and MaxOperations
// operations is taken; one over either is refused naming both counts, its
// escaped method names counted as a decoder reads them.
func TestCounts(t *testing.T) {
	if _, err := Parse(smallPaths(MaxPaths), false); err != nil {
		t.Fatalf("%d paths: %v", MaxPaths, err)
	}
	cases := []struct {
		doc  []byte
		want string
	}{
		{smallPaths(MaxPaths + 1), "has 10001 paths and 10001 operations"},
		{smallPaths(190_000), "has 190000 paths and 190000 operations"},
		{manyOperations(6251), "has 6251 paths and 50008 operations"},
		{[]byte(strings.ReplaceAll(string(manyOperations(6251)), `"get"`, `"g\u0065t"`)), "50008 operations"},
	}
	for _, c := range cases {
		_, err := Parse(c.doc, false)
		if _, ok := err.(*Invalid); !ok || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "at most 10000 paths and 50000 operations") {
			t.Errorf("%d bytes: %v, want a refusal naming %q", len(c.doc), err, c.want)
		}
	}
	if _, err := Parse(manyOperations(6250), false); err != nil {
		t.Errorf("50,000 operations: %v", err)
	}
	// YAML is counted once it is JSON.
	yaml := "openapi: 3.0.3\npaths:\n"
	for i := range MaxPaths + 1 {
		yaml += fmt.Sprintf("  /p%d: {get: {}}\n", i)
	}
	if _, err := Parse([]byte(yaml), true); err == nil || !strings.Contains(err.Error(), "10001 paths") {
		t.Errorf("YAML of %d paths: %v", MaxPaths+1, err)
	}
}
