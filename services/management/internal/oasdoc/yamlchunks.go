package oasdoc

import (
	"bytes"
	"encoding/json"
)

// The YAML decoder builds a node of ~170 bytes for every scalar and
// collection before anything is written, ~30 times the document (issue 32:
// peak heap per document within 8 times its size). A large document is
// therefore converted in pieces: each top-level member on its own, and each
// entry of a block-style `paths:` mapping on its own (under a `paths:` line
// of its own, so that its indentation reads as in the document), then
// joined. Only the splitting is done here; every piece is read by the same
// decoder and writer as a whole document. A piece starts at a line whose
// content begins exactly at the mapping's indentation: in valid YAML such a
// line ends any block scalar and plain scalar above it, and a quoted scalar
// or flow collection it would cut leaves the piece before it unterminated,
// an error. Any error, a key met twice, anything but a plain block mapping
// at the split levels, makes the whole document converted at once instead
// (its answer and error messages are then exactly the whole conversion's),
// one at a time when it is large (wholeChecks).

// yamlPiecewiseFrom is the size from which a YAML document is converted in
// pieces (a variable for the tests, which set it to 0).
var yamlPiecewiseFrom = 64 << 10

// yamlLine is one line of the document: its bytes (with the line end), its
// indentation in spaces, and whether it holds only a comment or nothing.
type yamlLine struct {
	text   []byte
	indent int
	empty  bool
}

func yamlLines(src []byte) []yamlLine {
	var lines []yamlLine
	for text := range bytes.Lines(src) {
		content := bytes.TrimLeft(text, " ")
		trimmed := bytes.TrimRight(content, " \r\n")
		lines = append(lines, yamlLine{text: text, indent: len(text) - len(content),
			empty: len(trimmed) == 0 || trimmed[0] == '#'})
	}
	return lines
}

// yamlPiecewise converts src in pieces; false when it cannot (src must then
// be converted whole).
func yamlPiecewise(src []byte) ([]byte, bool) {
	if len(src) < yamlPiecewiseFrom || bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		return nil, false
	}
	lines := yamlLines(src)
	for _, l := range lines {
		if !l.empty && l.indent == 0 && !entryStart(l.text) {
			return nil, false // a document marker, directive, sequence, flow root, tab or explicit key
		}
	}
	var out bytes.Buffer
	out.Grow(len(src) + len(src)/4)
	out.WriteByte('{')
	if !splitMapping(&out, nil, nil, lines, topLevels, map[string]bool{}) || out.Len() > MaxYAMLExpansion {
		return nil, false
	}
	out.WriteByte('}')
	return out.Bytes(), true
}

// topLevels is how many levels below a top-level member are split: a path
// item, a components section's entry.
func topLevels(key string) int {
	switch key {
	case "paths":
		return 1
	case "components":
		return 2
	}
	return 0
}

// splitMapping writes the members of the block mapping whose lines are
// body — headers are the lines of the keys above it, within the start of
// its JSON inside theirs —: each entry converted on its own under headers,
// or split in turn when levels(its key) > 0 and its value is a block
// mapping. False when body is not a plain block mapping, or a piece fails.
func splitMapping(out *bytes.Buffer, headers, within []byte, body []yamlLine, levels func(string) int, seen map[string]bool) bool {
	indent := -1
	var starts []int
	for i, l := range body {
		if l.empty {
			continue
		}
		if indent < 0 {
			indent = l.indent
		}
		switch {
		case l.indent < indent, l.indent == indent && !entryStart(l.text[indent:]):
			return false // a sequence, an explicit key, a tab
		case l.indent == indent:
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return false
	}
	for n, start := range starts {
		end := len(body)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		key := start
		if n == 0 {
			start = 0 // comments before the first entry
		} else {
			out.WriteByte(',')
		}
		if !splitEntry(out, headers, within, body[start:end], key-start, levels, seen) || out.Len() > MaxYAMLExpansion {
			return false
		}
	}
	return true
}

// splitEntry writes one entry of a mapping, its lines, its key on the line
// at index at: split again when its key is a bare name levels asks to
// split and its value a block mapping on the lines below, else whole.
func splitEntry(out *bytes.Buffer, headers, within []byte, entry []yamlLine, at int, levels func(string) int, seen map[string]bool) bool {
	keyLine := entry[at]
	name, ok := bareKey(bytes.TrimRight(keyLine.text[keyLine.indent:], " \r\n"))
	if !ok || levels(name) == 0 || !hasContent(entry[at+1:]) {
		return yamlPiece(out, append(append([]byte{}, headers...), join(entry)...), within, seen)
	}
	if seen[name] {
		return false
	}
	seen[name] = true
	depth := levels(name)
	member := `"` + name + `":{`
	out.WriteString(member)
	if !splitMapping(out, append(append([]byte{}, headers...), join(entry[:at+1])...), append(append([]byte{}, within...), member...),
		entry[at+1:], func(string) int { return depth - 1 }, map[string]bool{}) {
		return false
	}
	out.WriteByte('}')
	return true
}

// bareKey is the name of a line holding only `name:`, a name of letters,
// digits, '-' and '_' (which JSON spells as written).
func bareKey(line []byte) (string, bool) {
	name, found := bytes.CutSuffix(line, []byte(":"))
	if !found || len(name) == 0 {
		return "", false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return string(name), true
}

// plainKeyStart: a line starting with c starts a plain mapping key.
func plainKeyStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '/' || c == '$'
}

func hasContent(lines []yamlLine) bool {
	for _, l := range lines {
		if !l.empty {
			return true
		}
	}
	return false
}

// entryStart: content at a mapping's indentation starts a plain or quoted
// key (not a sequence entry, an explicit key or a tab).
func entryStart(content []byte) bool {
	return plainKeyStart(content[0]) || content[0] == '"' || content[0] == '\''
}

func join(lines []yamlLine) []byte {
	n := 0
	for _, l := range lines {
		n += len(l.text)
	}
	b := make([]byte, 0, n)
	for _, l := range lines {
		b = append(b, l.text...)
	}
	return b
}

// yamlPiece converts one piece, a mapping of one member (under within, the
// start of its JSON, when the piece is wrapped in a parent key), and writes
// that member; false on any error, or a key seen before.
func yamlPiece(out *bytes.Buffer, piece, within []byte, seen map[string]bool) bool {
	j, err := yamlWhole(piece)
	if err != nil || len(j) < 2 || j[0] != '{' {
		return false
	}
	inner := j[1 : len(j)-1]
	if within != nil { // bare names: each of its braces opens one level
		closing := bytes.Repeat([]byte("}"), bytes.Count(within, []byte("{")))
		if !bytes.HasPrefix(inner, within) || !bytes.HasSuffix(inner, closing) {
			return false
		}
		inner = inner[len(within) : len(inner)-len(closing)]
	}
	key, ok := onlyKey(inner)
	if !ok || seen[key] {
		return false
	}
	seen[key] = true
	out.Write(inner)
	return true
}

// onlyKey is the key of a JSON object's only member, given as its members'
// text; false when it holds no member or more than one.
func onlyKey(members []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(append(append([]byte{'{'}, members...), '}')))
	dec.Token() // {
	t, err := dec.Token()
	key, isKey := t.(string)
	if err != nil || !isKey {
		return "", false
	}
	var v json.RawMessage
	if dec.Decode(&v) != nil || dec.More() {
		return "", false
	}
	return key, true
}
