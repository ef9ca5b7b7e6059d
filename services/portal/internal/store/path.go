package store

import "strings"

// MaxPathBytes bounds a page's Path (CONTRACT §3).
const MaxPathBytes = 255

// PathProblem says what is wrong with a page's Path, or "" when it is a
// clean path inside its product (CONTRACT §3): an optional leading "/", then
// ASCII letters, digits, "-", "_", "." and "/" (at most one trailing "/"),
// no segment "." or "..", no "//", at most MaxPathBytes bytes. "" (no path
// of its own) is fine. The character set leaves no room for a scheme
// (":"), a query, a fragment, a backslash or an escape, so a link built
// from a Path stays under its product. The API refuses such a Path and the
// site links a stored one (from before the rule) by its ID instead.
func PathProblem(path string) string {
	if path == "" {
		return ""
	}
	if len(path) > MaxPathBytes {
		return "must be at most 255 bytes"
	}
	for _, c := range []byte(path) {
		if !isPathByte(c) {
			return "may hold only letters, digits, -, _, . and / (an optional leading /, no scheme, query or escapes)"
		}
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/")
	if inner == "" {
		return "must name a page under its product, not the product itself"
	}
	for seg := range strings.SplitSeq(inner, "/") {
		switch seg {
		case "":
			return "must not hold an empty segment (//)"
		case ".", "..":
			return "must not hold a . or .. segment"
		}
	}
	return ""
}

func isPathByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/'
}
