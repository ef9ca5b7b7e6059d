package oasdoc

import (
	"bytes"

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
	_ = eachMember(paths, func(key, value []byte) error {
		if isExtension(key) {
			return nil
		}
		nPaths++
		return eachMember(value, func(key, _ []byte) error {
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

// eachMember calls fn with the raw key (quotes removed, escapes kept) and
// value of each member of the object obj, without allocating; a value that
// is not an object has no members.
func eachMember(obj []byte, fn func(key, value []byte) error) error {
	i := space(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i = space(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) && obj[i] == '"' {
		keyEnd, err := rawjson.SkipString(obj, i)
		if err != nil {
			return err
		}
		j := space(obj, keyEnd)
		if j >= len(obj) || obj[j] != ':' {
			return rawjson.ErrSyntax
		}
		vs := space(obj, j+1)
		ve, err := rawjson.SkipValue(obj, vs)
		if err != nil {
			return err
		}
		key := obj[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 { // escaped: as a decoder reads it
			k, _ := rawjson.String(obj[i:keyEnd])
			key = []byte(k)
		}
		if err := fn(key, obj[vs:ve]); err != nil {
			return err
		}
		k := space(obj, ve)
		if k >= len(obj) || obj[k] != ',' {
			return nil
		}
		i = space(obj, k+1)
	}
	return nil
}

func space(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
