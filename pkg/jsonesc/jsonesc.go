// Package jsonesc writes the escapes a JSON string needs for its ASCII
// bytes, as encoding/json and protojson both write them: the one place for
// the writers that quote strings without an encoder (pkg/pbjson,
// management's rawjson).
package jsonesc

// Needed reports whether the ASCII byte c must be escaped in a JSON
// string: '"', '\\' or a control byte.
func Needed(c byte) bool { return c < 0x20 || c == '"' || c == '\\' }

// Append appends the escape of c, a byte Needed reports: \" \\ \b \f \n
// \r \t, or \u00XX (lower-case hex) for the other control bytes.
func Append(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', Hex[c>>4], Hex[c&0xf])
}

// Hex are the digits of a \u escape.
const Hex = "0123456789abcdef"
