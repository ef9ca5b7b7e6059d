package oasdoc

import (
	"fmt"
	"strings"
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

// encodedRefs is referencedSchemas with every reference's name written
// %-encoded ("#/components/schemas/%53%35"), as a URI fragment may be.
func encodedRefs(n int) []byte {
	doc := string(referencedSchemas(n))
	return []byte(strings.ReplaceAll(doc, `"#/components/schemas/S`, `"#/components/schemas/%53`))
}
