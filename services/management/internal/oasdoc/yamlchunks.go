package oasdoc

import (
	"bytes"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// The YAML decoder builds a node of ~170 bytes for every scalar and
// collection before anything is written, ~30 times the document (issue 32:
// peak heap per document within 8 times its size). A large document is
// therefore converted in pieces: each top-level member on its own, and each
// entry of a block-style `paths:` mapping on its own (under a `paths:` line
// of its own, so that its indentation reads as in the document; likewise a
// components section's entries and the extension's middleware.operations
// entries, topLevels), then joined. The lines are kept as offsets, 16 bytes
// each. Only the splitting is done here; every piece is read by the same
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

// yamlLine is one line of the document: where its bytes (with the line
// end) are, its indentation in spaces, and whether it holds only a comment
// or nothing. 16 bytes a line, in a slice made once to the line count: a
// document of short lines (a 20-byte line on average) holds less than its
// own size in them.
type yamlLine struct {
	start, end, indent int32
	empty              bool
}

// yamlSplit is a document being converted in pieces: its text, its lines,
// the JSON written so far.
type yamlSplit struct {
	src []byte
	out bytes.Buffer
}

// text is the line's bytes, its line end included.
func (y *yamlSplit) text(l yamlLine) []byte { return y.src[l.start:l.end] }

// content is the line's bytes after its indentation.
func (y *yamlSplit) content(l yamlLine) []byte { return y.src[l.start+l.indent : l.end] }

func yamlLines(src []byte) []yamlLine {
	lines := make([]yamlLine, 0, bytes.Count(src, []byte("\n"))+1)
	start := 0
	for text := range bytes.Lines(src) {
		content := bytes.TrimLeft(text, " ")
		trimmed := bytes.TrimRight(content, " \r\n")
		end := start + len(text)
		lines = append(lines, yamlLine{start: int32(start), end: int32(end), indent: int32(len(text) - len(content)),
			empty: len(trimmed) == 0 || trimmed[0] == '#'})
		start = end
	}
	return lines
}

// yamlPiecewise converts src in pieces; false when it cannot (src must then
// be converted whole).
func yamlPiecewise(src []byte) ([]byte, bool) {
	if len(src) < yamlPiecewiseFrom || len(src) > math.MaxInt32 || bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		return nil, false
	}
	y := &yamlSplit{src: src}
	lines := yamlLines(src)
	for i, l := range lines {
		if !l.empty {
			if bytes.Equal(bytes.TrimRight(y.text(l), " \r\n"), []byte("---")) {
				// the document start marker many files begin with: read
				// as a comment before the first entry, its piece's own
				lines[i].empty = true
			}
			break
		}
	}
	for _, l := range lines {
		if !l.empty && l.indent == 0 && !entryStart(y.text(l)) {
			return nil, false // a document marker, directive, sequence, flow root, tab or explicit key
		}
	}
	y.out.Grow(len(src) + len(src)/4)
	y.out.WriteByte('{')
	if !y.splitMapping(nil, nil, lines, topLevels) || y.out.Len() > MaxYAMLExpansion {
		return nil, false
	}
	y.out.WriteByte('}')
	return y.out.Bytes(), true
}

// splitRule says how the block mapping under an entry's bare key is
// split: by the rule it returns for that key, each of its entries in turn
// by its own; nil keeps the entry one piece.
type splitRule func(name string) splitRule

// topLevels splits a path item, a components section's entry and an
// operation's entry in the extension's middleware.operations (a fifth of a
// document whose operations have middleware) into pieces of their own.
func topLevels(name string) splitRule {
	switch name {
	case "paths":
		return wholeEntries
	case "components":
		return func(string) splitRule { return wholeEntries }
	case Extension:
		return only("middleware", only("operations", wholeEntries))
	}
	return nil
}

// wholeEntries keeps every entry one piece.
func wholeEntries(string) splitRule { return nil }

// only splits the entry named name by rule, and keeps the others whole.
func only(name string, rule splitRule) splitRule {
	return func(n string) splitRule {
		if n == name {
			return rule
		}
		return nil
	}
}

// splitMapping writes the members of the block mapping whose lines are
// body — headers are the lines of the keys above it, within the start of
// its JSON inside theirs —: each entry converted on its own under headers,
// or split in turn by the rule that rule gives its key when its value is a
// block mapping. False when body is not a plain block mapping, or a piece fails.
func (y *yamlSplit) splitMapping(headers, within []byte, body []yamlLine, rule splitRule) bool {
	indent := int32(-1)
	var starts []int
	for i, l := range body {
		if l.empty {
			continue
		}
		if indent < 0 {
			indent = l.indent
		}
		switch {
		case l.indent < indent, l.indent == indent && !entryStart(y.content(l)):
			return false // a sequence, an explicit key, a tab
		case l.indent == indent:
			starts = append(starts, i)
		}
	}
	if len(starts) == 0 {
		return false
	}
	var keys keyHashes
	// a run of entries kept whole, converted together up to pieceBatch
	from, to, entries := 0, 0, 0
	written := false
	comma := func() {
		if written {
			y.out.WriteByte(',')
		}
		written = true
	}
	flush := func() bool {
		if entries == 0 {
			return true
		}
		comma()
		ok := y.piece(append(append([]byte{}, headers...), y.join(body[from:to])...), within, &keys, entries)
		from, entries = to, 0
		return ok && y.out.Len() <= MaxYAMLExpansion
	}
	for n, start := range starts {
		end := len(body)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		key := start
		if n == 0 {
			start = 0 // comments before the first entry
		}
		if inner := y.entryRule(body[start:end], key-start, rule); inner != nil {
			if !flush() {
				return false
			}
			comma()
			if !y.splitEntry(headers, within, body[start:end], key-start, inner, &keys) || y.out.Len() > MaxYAMLExpansion {
				return false
			}
			from, to = end, end
			continue
		}
		if entries > 0 && int(body[end-1].end-body[from].start) > pieceBatch && !flush() {
			return false
		}
		to, entries = end, entries+1
	}
	return flush() && !keys.twice()
}

// pieceBatch is how much YAML consecutive entries kept whole are converted
// together up to: the decoder costs a few kilobytes a piece whatever its
// size (20,000 one-line entries made 20,000 of them), and its tree about 30
// times the text.
// (a variable for the tests, which also cut every entry apart).
var pieceBatch = 4 << 10

// keyHashes are the keys of one mapping's entries, as 64-bit hashes (of a
// seed chosen at start): 8 bytes a key, where a map of the names held
// about 60. Two equal hashes count as a key twice, which leaves the
// document whole, as a real key twice does.
type keyHashes []uint64

var keySeed = maphash.MakeSeed()

func (k *keyHashes) add(key string) { *k = append(*k, maphash.String(keySeed, key)) }

func (k *keyHashes) addBytes(key []byte) { *k = append(*k, maphash.Bytes(keySeed, key)) }

// twice reports whether a hash is there twice.
func (k keyHashes) twice() bool {
	slices.Sort(k)
	for i := 1; i < len(k); i++ {
		if k[i] == k[i-1] {
			return true
		}
	}
	return false
}

// splitEntry writes one entry of a mapping, its lines, its key on the line
// at index at, its key added to keys: split again when its key is a bare
// name rule gives a rule and its value a block mapping on the lines below,
// else whole.
func (y *yamlSplit) splitEntry(headers, within []byte, entry []yamlLine, at int, inner splitRule, keys *keyHashes) bool {
	name, _ := bareKey(bytes.TrimRight(y.content(entry[at]), " \r\n"))
	keys.add(name)
	member := `"` + name + `":{`
	y.out.WriteString(member)
	if !y.splitMapping(append(append([]byte{}, headers...), y.join(entry[:at+1])...), append(append([]byte{}, within...), member...),
		entry[at+1:], inner) {
		return false
	}
	y.out.WriteByte('}')
	return true
}

// entryRule is the rule an entry (its key on the line at index at) is split
// by: the one rule gives its key when that is a bare name and its value a
// block mapping on the lines below; nil keeps it whole.
func (y *yamlSplit) entryRule(entry []yamlLine, at int, rule splitRule) splitRule {
	name, ok := bareKey(bytes.TrimRight(y.content(entry[at]), " \r\n"))
	if !ok || !hasContent(entry[at+1:]) {
		return nil
	}
	return rule(name)
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

// plainKeyStart: a line starting with c starts a plain mapping key: an
// ASCII character that is not space, a YAML indicator or '.' (which starts
// the document end marker; a key such as `.well-known` then leaves the
// document whole). Operation ids start with anything (`^/users/[a-z]+$GET`).
func plainKeyStart(c byte) bool {
	return c > ' ' && c < utf8.RuneSelf && !strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`.", rune(c))
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

// join is the text of consecutive lines.
func (y *yamlSplit) join(lines []yamlLine) []byte {
	if len(lines) == 0 {
		return nil
	}
	return y.src[lines[0].start:lines[len(lines)-1].end]
}

// piece converts one piece, a mapping of want members (under within, the
// start of its JSON, when the piece is wrapped in a parent key), and writes
// them, their keys added to keys; false on any error, or another number of
// members.
func (y *yamlSplit) piece(piece, within []byte, keys *keyHashes, want int) bool {
	j, err := yamlWhole(piece)
	if err != nil || len(j) < 2 || j[0] != '{' {
		return false
	}
	obj := j           // the object of the members, its braces included
	if within != nil { // bare names: each of its braces opens one level
		closing := bytes.Repeat([]byte("}"), bytes.Count(within, []byte("{")))
		if !bytes.HasPrefix(j[1:], within) || !bytes.HasSuffix(j[:len(j)-1], closing) {
			return false
		}
		obj = j[len(within) : len(j)-len(closing)]
	}
	n := 0
	err = rawjson.Each(obj, func(key, _ []byte) error {
		n++
		keys.addBytes(key)
		return nil
	})
	if err != nil || n != want {
		return false
	}
	y.out.Write(obj[1 : len(obj)-1])
	return true
}
