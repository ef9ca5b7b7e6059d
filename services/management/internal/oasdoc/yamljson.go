package oasdoc

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// A YAML body that is JSON text (a client that sends its JSON document with
// a YAML content type, or YAML written in flow style that JSON reads) has no
// block mappings to cut at lines, and was converted whole (~30 times its
// size). JSON text holds no anchors, aliases, tags or comments, so its
// members are as independent as a block mapping's entries: each is
// converted on its own, wrapped in the members above it as they are written
// in the document (the same nesting), by the same decoder and writer, at
// the levels topLevels names. As with the block pieces, any error, a key
// twice or a tab or carriage return anywhere (the YAML scanner reads those
// by position, and the text between the members is not in any piece) makes
// the document converted whole instead.

// jsonPiecewise converts src, JSON text read as YAML, in pieces; false when
// it cannot (src must then be converted whole).
func jsonPiecewise(src []byte) ([]byte, bool) {
	if len(src) < yamlPiecewiseFrom || len(src) > math.MaxInt32 || bytes.ContainsAny(src, "\t\r") || !json.Valid(src) {
		return nil, false
	}
	y := &yamlSplit{src: src}
	y.out.Grow(len(src))
	y.out.WriteByte('{')
	if !y.jsonMembers(nil, nil, src, topLevels, 0) || y.out.Len() > MaxYAMLExpansion {
		return nil, false
	}
	y.out.WriteByte('}')
	return y.out.Bytes(), true
}

// isJSONObject reports whether src, after spaces and line ends, starts an
// object.
func isJSONObject(src []byte) bool {
	i := jsonSpace(src, 0)
	return i < len(src) && src[i] == '{'
}

func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n') {
		i++
	}
	return i
}

// jsonMembers writes the members of the non-empty object obj, each
// converted on its own (consecutive ones together up to pieceBatch) inside
// open (the document's text of the members
// above it, each up to its value's brace), within the start of its JSON
// inside theirs, or split in turn when rule gives its key a rule and its
// value is a non-empty object; depth is how many objects open opens.
func (y *yamlSplit) jsonMembers(open, within, obj []byte, rule splitRule, depth int) bool {
	var keys keyHashes
	i := jsonSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = jsonSpace(obj, i+1)
	// a run of members kept whole, converted together up to pieceBatch
	from, to, members := 0, 0, 0
	written := false
	comma := func() {
		if written {
			y.out.WriteByte(',')
		}
		written = true
	}
	flush := func() bool {
		if members == 0 {
			return true
		}
		comma()
		piece := make([]byte, 0, 1+len(open)+to-from+depth+1)
		piece = append(append(append(append(piece, '{'), open...), obj[from:to]...), bytes.Repeat([]byte("}"), depth+1)...)
		ok := y.piece(piece, within, &keys, members)
		members = 0
		return ok && y.out.Len() <= MaxYAMLExpansion
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return false // an empty object: converted whole
		}
		keyEnd, err := rawjson.SkipString(obj, i)
		if err != nil {
			return false
		}
		name, _ := rawjson.String(obj[i:keyEnd])
		vs := jsonSpace(obj, jsonSpace(obj, keyEnd)+1) // past ':'
		ve, err := rawjson.SkipValue(obj, vs)
		if err != nil {
			return false
		}
		var inner splitRule
		if rule != nil {
			inner = rule(name)
		}
		if inner != nil && isJSONObject(obj[vs:ve]) && !isEmptyJSONObject(obj[vs:ve]) {
			if !flush() {
				return false
			}
			comma()
			keys.add(name)
			member := `"` + name + `":{`
			y.out.WriteString(member)
			vOpen := jsonSpace(obj, vs) + 1
			if !y.jsonMembers(append(append([]byte{}, open...), obj[i:vOpen]...), append(append([]byte{}, within...), member...), obj[vs:ve], inner, depth+1) {
				return false
			}
			y.out.WriteByte('}')
			if y.out.Len() > MaxYAMLExpansion {
				return false
			}
		} else {
			if members > 0 && ve-from > pieceBatch && !flush() {
				return false
			}
			if members == 0 {
				from = i
			}
			to, members = ve, members+1
		}
		i = jsonSpace(obj, ve)
		if i < len(obj) && obj[i] == ',' {
			i = jsonSpace(obj, i+1)
			continue
		}
		return flush() && !keys.twice()
	}
}

func isEmptyJSONObject(v []byte) bool {
	i := jsonSpace(v, jsonSpace(v, 0)+1)
	return i < len(v) && v[i] == '}'
}
