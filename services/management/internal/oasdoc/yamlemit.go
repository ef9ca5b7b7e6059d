package oasdoc

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// JSONToYAML writes a JSON document as block-style YAML (two-space indent),
// keeping key order and number spelling; YAMLToJSON of the result is the
// same document. It streams from the JSON bytes to the YAML text without
// building a tree: a 500-operation document is a few hundred kilobytes.
func JSONToYAML(doc []byte) ([]byte, error) {
	if !json.Valid(doc) {
		return nil, errors.New("oasdoc: the document is not valid JSON")
	}
	return toYAML(doc, "")
}

// toYAML is JSONToYAML of valid JSON, without the root object's members
// named leaveOut (none when empty; a root that is not an object is then
// refused, as rawjson.Delete refuses it): the public export leaves out the
// extension as it writes instead of writing a copy of the document without
// it.
//
// A first pass counts the answer's bytes (writing each item into a small
// buffer it then empties), the second writes them into a slice of that
// size: the answer is held once, where appending to a guess held up to
// three times it while it grew.
func toYAML(doc []byte, leaveOut string) ([]byte, error) {
	count := &yamlEmitter{in: doc, out: make([]byte, 0, 4<<10), plain: map[string]bool{}, leaveOut: leaveOut, counting: true}
	if err := count.emit(); err != nil {
		return nil, err
	}
	e := &yamlEmitter{in: doc, out: make([]byte, 0, count.counted+len(count.out)), plain: count.plain, leaveOut: leaveOut}
	if err := e.emit(); err != nil {
		return nil, err
	}
	return e.out, nil
}

// emit writes the document.
func (e *yamlEmitter) emit() error {
	e.skipSpace()
	if e.leaveOut != "" && e.peek() != '{' {
		return rawjson.ErrNotObject
	}
	switch e.peek() {
	case '{':
		if !e.emptyContainer() {
			e.mapping(0, false)
		}
		if e.counted+len(e.out) == 0 { // empty, or only members left out
			e.out = append(e.out, "{}"...)
		}
	case '[':
		if e.emptyContainer() {
			e.out = append(e.out, "[]"...)
		} else {
			e.sequence(0, false)
		}
	default:
		e.scalar(-1)
	}
	e.out = append(e.out, '\n')
	return nil
}

// yamlEmitter reads valid JSON from in and appends YAML to out.
type yamlEmitter struct {
	in  []byte
	pos int
	out []byte
	// plain caches, per string, whether YAML reads it back written plain
	// as the same string (asked of the YAML parser for the rare strings
	// that could be numbers, timestamps and the like).
	plain map[string]bool
	// leaveOut names the root's members not written (none when empty).
	leaveOut string
	// counting: a pass that only counts; counted is the bytes of out it
	// counted and dropped.
	counting bool
	counted  int
}

func (e *yamlEmitter) peek() byte {
	if e.pos < len(e.in) {
		return e.in[e.pos]
	}
	return 0
}

func (e *yamlEmitter) skipSpace() {
	for e.pos < len(e.in) {
		switch e.in[e.pos] {
		case ' ', '\t', '\n', '\r':
			e.pos++
		default:
			return
		}
	}
}

// emptyContainer reports whether the object or array at pos is empty, and
// if so consumes it.
func (e *yamlEmitter) emptyContainer() bool {
	save := e.pos
	e.pos++
	e.skipSpace()
	if c := e.peek(); c == '}' || c == ']' {
		e.pos++
		return true
	}
	e.pos = save
	return false
}

func (e *yamlEmitter) indent(n int) {
	for range n {
		e.out = append(e.out, ' ')
	}
}

// items walks the non-empty object or array at pos, calling each at every
// member or element; each starts a new line at column col, but the first
// when inline is set (it continues the current line, after "- ").
func (e *yamlEmitter) items(end byte, col int, inline bool, each func()) {
	e.pos++ // '{' or '['
	for first := true; ; first = false {
		if e.counting {
			e.counted += len(e.out)
			e.out = e.out[:0]
		}
		e.skipSpace()
		if e.peek() == end {
			e.pos++
			return
		}
		if e.peek() == ',' {
			e.pos++
			e.skipSpace()
		}
		if col == 0 && end == '}' && e.leaveOut != "" && e.leftOut() {
			continue
		}
		if !first || !inline {
			if e.counted+len(e.out) > 0 {
				e.out = append(e.out, '\n')
			}
			e.indent(col)
		}
		each()
	}
}

// leftOut reports whether the member at pos is named leaveOut, and if so
// consumes it.
func (e *yamlEmitter) leftOut() bool {
	save := e.pos
	if e.str() != e.leaveOut {
		e.pos = save
		return false
	}
	e.skipSpace()
	e.pos++ // ':'
	e.skipSpace()
	end, err := rawjson.SkipValue(e.in, e.pos)
	if err != nil { // valid JSON: cannot fail
		end = len(e.in)
	}
	e.pos = end
	return true
}

// mapping writes the non-empty object at pos, its keys at column col. When
// inline is set the first key continues the current line (after "- ").
func (e *yamlEmitter) mapping(col int, inline bool) {
	e.items('}', col, inline, func() {
		key := e.str()
		if len(key) > 128 {
			// too long for an implicit key: an explicit one
			e.out = append(e.out, "? "...)
			e.stringValue(key, -1)
			e.out = append(e.out, '\n')
			e.indent(col)
		} else {
			e.stringValue(key, -1)
		}
		e.out = append(e.out, ':')
		e.skipSpace()
		e.pos++ // ':'
		e.skipSpace()
		e.value(col)
	})
}

// sequence writes the non-empty array at pos, its dashes at column col.
func (e *yamlEmitter) sequence(col int, inline bool) {
	e.items(']', col, inline, func() {
		e.out = append(e.out, "- "...)
		e.node(col, true, "")
	})
}

// value writes the value of a mapping key whose column is col; the key and
// its colon are written.
func (e *yamlEmitter) value(col int) { e.node(col, false, " ") }

// node writes the value at pos, in a mapping or a sequence whose column is
// col: a non-empty container on the lines below (inline: its first line
// continues the current one, after "- "), or after sep an empty one or a
// scalar.
func (e *yamlEmitter) node(col int, inline bool, sep string) {
	switch e.peek() {
	case '{':
		if e.emptyContainer() {
			e.out = append(append(e.out, sep...), "{}"...)
		} else {
			e.mapping(col+2, inline)
		}
	case '[':
		if e.emptyContainer() {
			e.out = append(append(e.out, sep...), "[]"...)
		} else {
			e.sequence(col+2, inline)
		}
	default:
		e.out = append(e.out, sep...)
		e.scalar(col + 2)
	}
}

// scalar writes the string, number, boolean or null at pos; a multi-line
// string may become a literal block indented to col (col < 0: never).
func (e *yamlEmitter) scalar(col int) {
	if e.peek() == '"' {
		e.stringValue(e.str(), col)
		return
	}
	start := e.pos
	for e.pos < len(e.in) {
		switch e.in[e.pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			e.out = append(e.out, e.in[start:e.pos]...)
			return
		}
		e.pos++
	}
	e.out = append(e.out, e.in[start:e.pos]...)
}

// str reads the JSON string at pos.
func (e *yamlEmitter) str() string {
	start := e.pos
	e.pos++
	simple := true
	for e.pos < len(e.in) {
		c := e.in[e.pos]
		if c == '\\' {
			simple = false
			e.pos += 2
			continue
		}
		if c >= utf8.RuneSelf {
			simple = false
		}
		e.pos++
		if c == '"' {
			break
		}
	}
	raw := e.in[start:e.pos]
	if simple {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid JSON: cannot fail
	return s
}

// maxPlainCache bounds the strings whose style the emitter keeps: a
// document's many distinct number-like strings (component names "1" to
// "20000") cost a parse each, not a map the size of the document.
const maxPlainCache = 1024

// Scalar styles, as yaml.v3 picks them for the same strings.
const (
	plainStyle = iota
	singleStyle
	doubleStyle
	literalStyle
)

// style picks how s is written: plain when YAML reads it back as the same
// string, single-quoted when only its characters prevent that, double-quoted
// when it would read as another type or needs escapes, literal for
// multi-line values that read back exactly. It is a classifier of YAML
// 1.1/1.2 scalar rules, each a test of the string in the order the YAML
// parser applies them; splitting it would scatter that order (cyclomatic
// complexity over 15 on purpose).
func (e *yamlEmitter) style(s string, literal bool) int {
	if resolvesOther(s) || yaml11Bools[s] {
		return doubleStyle
	}
	if !printable(s, false) {
		if literal && literalOK(s) {
			return literalStyle
		}
		return doubleStyle
	}
	switch s[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return singleStyle
	}
	if s[len(s)-1] == ' ' || s[len(s)-1] == ':' || strings.Contains(s, ": ") || strings.Contains(s, " #") ||
		strings.HasPrefix(s, "...") {
		return singleStyle
	}
	if c := s[0]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '_' || c >= utf8.RuneSelf {
		// only the words resolvesOther lists resolve to another type
		return plainStyle
	}
	// digits, signs, dots and the like: ask the YAML parser, once per string
	plain, seen := e.plain[s]
	if !seen {
		var n yaml.Node
		plain = yaml.Unmarshal([]byte("- "+s), &n) == nil && len(n.Content) == 1 &&
			len(n.Content[0].Content) == 1 && n.Content[0].Content[0].ShortTag() == "!!str" &&
			n.Content[0].Content[0].Value == s
		if len(e.plain) >= maxPlainCache {
			clear(e.plain)
		}
		e.plain[s] = plain
	}
	if plain {
		return plainStyle
	}
	return doubleStyle
}

// stringValue writes s; a literal block is indented to col (col < 0: none).
func (e *yamlEmitter) stringValue(s string, col int) {
	switch e.style(s, col >= 0) {
	case plainStyle:
		e.out = append(e.out, s...)
	case singleStyle:
		e.out = append(e.out, '\'')
		for i := 0; i < len(s); i++ {
			if s[i] == '\'' {
				e.out = append(e.out, '\'')
			}
			e.out = append(e.out, s[i])
		}
		e.out = append(e.out, '\'')
	case literalStyle:
		e.out = append(e.out, '|')
		if !strings.HasSuffix(s, "\n") {
			e.out = append(e.out, '-')
		}
		for line := range strings.Lines(s) {
			e.out = append(e.out, '\n')
			if line != "\n" {
				e.indent(col)
			}
			e.out = append(e.out, strings.TrimSuffix(line, "\n")...)
		}
	default:
		e.doubleQuoted(s)
	}
}

func (e *yamlEmitter) doubleQuoted(s string) {
	e.out = append(e.out, '"')
	for _, r := range s {
		switch {
		case r == '"':
			e.out = append(e.out, `\"`...)
		case r == '\\':
			e.out = append(e.out, `\\`...)
		case r == '\n':
			e.out = append(e.out, `\n`...)
		case r == '\t':
			e.out = append(e.out, `\t`...)
		case r == '\r':
			e.out = append(e.out, `\r`...)
		case !printableRune(r):
			const hex = "0123456789ABCDEF"
			e.out = append(e.out, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			e.out = utf8.AppendRune(e.out, r)
		}
	}
	e.out = append(e.out, '"')
}

// resolvesOther reports the words YAML 1.2 reads as null or booleans, which
// yaml.v3 writes double-quoted, and the empty string.
func resolvesOther(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE":
		return true
	}
	return false
}

// printableRune is YAML's printable set, less the line breaks and the byte
// order mark, which are written escaped.
func printableRune(r rune) bool {
	switch {
	case r == utf8.RuneError:
		return true // the replacement character itself
	case r >= 0x20 && r <= 0x7E:
		return true
	case r < 0xA0:
		return false
	case r == 0x2028 || r == 0x2029 || r == 0xFEFF:
		return false
	case r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
		return false
	}
	return true
}

// printable reports whether every character of s is printable (newlines
// too when newlines is set).
func printable(s string, newlines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c <= 0x7E {
			continue
		}
		if c == '\n' && newlines {
			continue
		}
		if c < utf8.RuneSelf {
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !printableRune(r) {
			return false
		}
		i += size - 1
	}
	return true
}

// literalOK reports whether s (which has a line break) reads back exactly
// from a literal block: printable, no space before a break or at the end,
// not starting with a space or a break, at most one final break.
func literalOK(s string) bool {
	return strings.Contains(s, "\n") && printable(s, true) &&
		!strings.Contains(s, " \n") && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n\n") &&
		s[0] != ' ' && s[0] != '\n' && s != "\n"
}
