package oasdoc

import (
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// What a document may hold (CONTRACT §0 "Resource bounds"): the cost of
// validating, converting and deriving a document grows with its paths and
// operations, not only with its bytes (an 11.5 MB document of 190,000 small
// paths took about 500 MiB to check), so a document over either count is
// refused before anything decodes it.
const (
	MaxPaths      = 10_000
	MaxOperations = 50_000
)

// checkCounts refuses a document (a JSON object) whose paths object holds
// more than MaxPaths paths or more than MaxOperations operations, naming
// both counts. It only scans the text, allocating nothing for keys without
// escapes. Malformed parts are left to the decoder.
func checkCounts(doc []byte) error {
	paths, ok, err := rawjson.Lookup(doc, "paths")
	if err != nil || !ok {
		return nil
	}
	var nPaths, nOps int
	_ = rawjson.Each(paths, func(key, value []byte) error {
		if isExtension(key) {
			return nil
		}
		nPaths++
		return rawjson.Each(value, func(key, _ []byte) error {
			if isMethod(key) {
				nOps++
			}
			return nil
		})
	})
	if nPaths > MaxPaths || nOps > MaxOperations {
		return invalid("paths: the document has %d paths and %d operations; at most %d paths and %d operations are accepted", nPaths, nOps, MaxPaths, MaxOperations)
	}
	return nil
}

// isMethod tells whether a path item's key names an operation.
func isMethod(key []byte) bool {
	switch string(key) {
	case "connect", "delete", "get", "head", "options", "patch", "post", "put", "trace", "query":
		return true
	}
	return false
}
