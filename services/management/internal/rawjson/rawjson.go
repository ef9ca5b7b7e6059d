// Package rawjson reads and edits JSON documents as bytes, so that everything
// not edited stays exactly as written: key order, whitespace, unicode
// escapes and number spelling (a 2^53+1 integer is never a float64 here).
//
// The functions expect valid JSON (check with encoding/json.Valid first);
// on text that is not, they return ErrSyntax rather than guess.
package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/pkg/jsonesc"
)

// ErrSyntax means the text is not the JSON the function expected.
var ErrSyntax = errors.New("rawjson: malformed JSON")

// ErrNotObject means a value on the path is not an object.
var ErrNotObject = errors.New("rawjson: not an object")

// Member is one member of an object: its decoded key and where its key and
// value sit in the object's text.
type Member struct {
	Key        string
	Start      int // offset of the key's opening quote
	ValueStart int // offset of the value's first byte
	ValueEnd   int // offset just past the value
}

// Members lists the members of the object obj (surrounding whitespace
// allowed) in document order.
func Members(obj []byte) ([]Member, error) {
	var out []Member
	err := members(obj, func(key []byte, m Member) {
		m.Key = string(key)
		out = append(out, m)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// members walks the members of the object obj as strictly as Members
// reads them (ErrNotObject, ErrSyntax), calling fn with each key, decoded,
// and its offsets (m.Key left empty). The key is obj's own bytes when it
// has nothing to decode, valid only during the call: the walk allocates
// nothing for such keys.
func members(obj []byte, fn func(key []byte, m Member)) error {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrNotObject
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return ErrSyntax
		}
		keyEnd, err := SkipString(obj, i)
		if err != nil {
			return err
		}
		key := obj[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) || !noControl(key) {
			k, ok := String(obj[i:keyEnd])
			if !ok {
				return ErrSyntax
			}
			key = []byte(k)
		}
		j := SkipSpace(obj, keyEnd)
		if j >= len(obj) || obj[j] != ':' {
			return ErrSyntax
		}
		vs := SkipSpace(obj, j+1)
		ve, err := SkipValue(obj, vs)
		if err != nil {
			return err
		}
		fn(key, Member{Start: i, ValueStart: vs, ValueEnd: ve})
		k := SkipSpace(obj, ve)
		if k >= len(obj) {
			return ErrSyntax
		}
		switch obj[k] {
		case ',':
			i = SkipSpace(obj, k+1)
		case '}':
			return nil
		default:
			return ErrSyntax
		}
	}
	return ErrSyntax
}

// Each calls fn with the key (quotes removed; escapes decoded, when there
// are any, as a decoder reads the key) and the value of each member of the
// object obj in document order, allocating nothing for keys without
// escapes; key is valid only during the call. A value that is not an object
// has no members; an error of fn ends the walk and is returned.
func Each(obj []byte, fn func(key, value []byte) error) error {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i = SkipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) && obj[i] == '"' {
		keyEnd, err := SkipString(obj, i)
		if err != nil {
			return err
		}
		j := SkipSpace(obj, keyEnd)
		if j >= len(obj) || obj[j] != ':' {
			return ErrSyntax
		}
		vs := SkipSpace(obj, j+1)
		ve, err := SkipValue(obj, vs)
		if err != nil {
			return err
		}
		key := obj[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			k, _ := String(obj[i:keyEnd])
			key = []byte(k)
		}
		if err := fn(key, obj[vs:ve]); err != nil {
			return err
		}
		k := SkipSpace(obj, ve)
		if k >= len(obj) || obj[k] != ',' {
			return nil
		}
		i = SkipSpace(obj, k+1)
	}
	return nil
}

// Find returns the last member named key (the one a JSON decoder would
// keep), reading the object as Members does without allocating for keys.
func Find(obj []byte, key string) (Member, bool, error) {
	var last Member
	found := false
	err := members(obj, func(k []byte, m Member) {
		if string(k) == key {
			last, found = m, true
		}
	})
	if err != nil || !found {
		return Member{}, false, err
	}
	last.Key = key
	return last, true, nil
}

// Lookup returns the raw value at path (object keys from the root).
func Lookup(doc []byte, path ...string) ([]byte, bool, error) {
	start, end, ok, err := locate(doc, path)
	if !ok || err != nil {
		return nil, ok, err
	}
	return doc[start:end], true, nil
}

// locate finds the span of the value at path.
func locate(doc []byte, path []string) (start, end int, ok bool, err error) {
	if len(path) == 0 {
		start = SkipSpace(doc, 0)
		end, err = SkipValue(doc, start)
		return start, end, err == nil, err
	}
	start, end, depth, err := walk(doc, path)
	return start, end, err == nil && depth == len(path), err
}

// walk follows path from the root as far as it exists, scanning each object
// on the way once. It returns how many keys it followed and the span of the
// value they lead to; the root's span runs to the end of doc.
func walk(doc []byte, path []string) (start, end, depth int, err error) {
	start, end = SkipSpace(doc, 0), len(doc)
	for ; depth < len(path); depth++ {
		m, found, err := Find(doc[start:end], path[depth])
		if err != nil {
			return 0, 0, 0, err
		}
		if !found {
			break
		}
		start, end = start+m.ValueStart, start+m.ValueEnd
	}
	return start, end, depth, nil
}

// String decodes raw as a JSON string; ok is false for any other value.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if body := raw[1 : len(raw)-1]; raw[len(raw)-1] == '"' && bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) && noControl(body) {
		return string(body), true // nothing to unescape
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// Quote returns s as a JSON string, without HTML escaping.
func Quote(s string) []byte { return AppendQuote(nil, s) }

// AppendQuote appends s as a JSON string, without HTML escaping, to dst:
// the bytes encoding/json writes for it ('"' and '\\' escaped, control
// bytes as \b \f \n \r \t or \u00XX, U+2028 and U+2029 as \u escapes,
// each byte of invalid UTF-8 as \ufffd, every other rune as is), written
// here without an encoder or an allocation beyond dst's growth: a migration
// report quotes tens of thousands of IDs and messages.
func AppendQuote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	run := 0 // start of the bytes not yet appended
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && !jsonesc.Needed(c) {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = jsonesc.Append(append(dst, s[run:i]...), c)
			i++
			run = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[run:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[run:i]...), '\\', 'u', '2', '0', '2', jsonesc.Hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		run = i
	}
	return append(append(dst, s[run:]...), '"')
}

// Set returns doc with the value at path replaced by value, or, when the
// last key is absent, added as the last member of its object. Missing
// objects along the path are added the same way. Nothing else changes.
func Set(doc []byte, value []byte, path ...string) ([]byte, error) {
	if len(path) == 0 {
		return nil, errors.New("rawjson: empty path")
	}
	start, end, depth, err := walk(doc, path)
	if err != nil {
		return nil, err
	}
	if depth == len(path) {
		return splice(doc, start, end, value), nil
	}
	// path[:depth] exists: add path[depth] to it, wrapping the rest in new objects.
	member := value
	for i := len(path) - 1; i > depth; i-- {
		member = concat([]byte("{"), Quote(path[i]), []byte(":"), member, []byte("}"))
	}
	return addMember(doc, start, end, path[depth], member)
}

// SetMembers returns obj with the members named by keys (distinct) set to
// values, in one walk and one copy: the same bytes as Set(obj, values[i],
// keys[i]) for each key in turn, each walking and copying the whole
// document (a derived definition's three IDs took a fifth of a migration's
// CPU that way). A key present is replaced in place at its last
// occurrence; the absent ones are added after the last member, in order.
func SetMembers(obj []byte, keys []string, values [][]byte) ([]byte, error) {
	if len(keys) != len(values) {
		return nil, errors.New("rawjson: as many values as keys")
	}
	found := make([]Member, len(keys))
	last, n := 0, 0
	err := members(obj, func(key []byte, m Member) {
		for i, k := range keys {
			if string(key) == k {
				found[i] = m
			}
		}
		last = m.ValueEnd
		n++
	})
	if err != nil {
		return nil, err
	}
	if n == 0 { // an empty object is replaced whole: Set's way
		for i, k := range keys {
			if obj, err = Set(obj, values[i], k); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
	// the spans to replace, in document order, then the added members
	size := len(obj)
	order := make([]int, 0, len(keys))
	for i, m := range found {
		if m.ValueEnd > 0 {
			order = append(order, i)
			size += len(values[i]) - (m.ValueEnd - m.ValueStart)
		} else {
			size += len(`,"":`) + len(keys[i]) + 2*len(keys[i]) + len(values[i]) // a quoted key may grow
		}
	}
	slices.SortFunc(order, func(a, b int) int { return found[a].ValueStart - found[b].ValueStart })
	out := make([]byte, 0, size)
	at := 0
	for _, i := range order {
		out = append(append(out, obj[at:found[i].ValueStart]...), values[i]...)
		at = found[i].ValueEnd
	}
	out = append(out, obj[at:last]...)
	for i, m := range found {
		if m.ValueEnd == 0 {
			out = append(append(append(append(out, ','), Quote(keys[i])...), ':'), values[i]...)
		}
	}
	return append(out, obj[last:]...), nil
}

// addMember adds "key":value as the last member of the object at doc[start:end].
func addMember(doc []byte, start, end int, key string, value []byte) ([]byte, error) {
	obj := doc[start:end]
	ms, err := Members(obj)
	if err != nil {
		return nil, fmt.Errorf("%w at %q", err, key)
	}
	member := concat(Quote(key), []byte(":"), value)
	if len(ms) == 0 {
		return splice(doc, start, end, concat([]byte("{"), member, []byte("}"))), nil
	}
	at := start + ms[len(ms)-1].ValueEnd
	return splice(doc, at, at, concat([]byte(","), member)), nil
}

// Delete returns doc without every member named by the last key of path in
// the object the other keys lead to; removed reports whether one was there.
func Delete(doc []byte, path ...string) (out []byte, removed bool, err error) {
	if len(path) == 0 {
		return nil, false, errors.New("rawjson: empty path")
	}
	start, end, ok, err := locate(doc, path[:len(path)-1])
	if err != nil || !ok {
		return doc, false, err
	}
	out = doc
	for {
		obj := out[start:end]
		ms, err := Members(obj)
		if err != nil {
			return nil, false, err
		}
		idx := -1
		for i, m := range ms {
			if m.Key == path[len(path)-1] {
				idx = i
				break
			}
		}
		if idx < 0 {
			return out, removed, nil
		}
		// Remove from this member's key to the next member's key, or, for
		// the last member, from the end of the previous value.
		from, to := ms[idx].Start, ms[idx].ValueEnd
		switch {
		case idx+1 < len(ms):
			to = ms[idx+1].Start
		case idx > 0:
			from = ms[idx-1].ValueEnd
		default: // the only member: keep the braces
			to = SkipSpace(obj, to)
		}
		out = splice(out, start+from, start+to, nil)
		end -= to - from
		removed = true
	}
}

func splice(doc []byte, start, end int, with []byte) []byte {
	out := make([]byte, 0, len(doc)-(end-start)+len(with))
	out = append(out, doc[:start]...)
	out = append(out, with...)
	return append(out, doc[end:]...)
}

func concat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON white space (len(b) when there is none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the offset just past the string starting at b[i] == '"'
// (ErrSyntax when it does not end).
func SkipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, ErrSyntax
}

// SkipValue returns the offset just past the value starting at b[i], which
// must be well-formed JSON (ErrSyntax when it visibly is not).
func SkipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := SkipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, ErrSyntax
	default:
		j := i
		for j < len(b) && !EndsScalar(b[j]) {
			j++
		}
		if j == i {
			return 0, ErrSyntax
		}
		return j, nil
	}
}

// EndsScalar reports whether c ends a number, true, false or null.
func EndsScalar(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ',', '}', ']':
		return true
	}
	return false
}

// noControl reports whether b holds no control character (which a JSON string may not).
func noControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return false
		}
	}
	return true
}
