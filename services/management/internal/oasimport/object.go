package oasimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
)

// An import reads a few small parts of a document (info, servers,
// security, the extension, the security schemes) and walks its operations;
// it never holds the whole document as a tree of Go values, which costs
// ~30 times the document's bytes (issue 32: peak heap per document within
// 8 times its size). A document is an object whose members stay raw JSON
// until asked for; paths are rewritten one path item at a time; the answer
// is written member by member, each decoded and encoded on its own, so it
// holds the same bytes a whole decode and encode gives (keys sorted,
// numbers as written, no HTML escaping).

// object is a JSON object whose members are json.RawMessage until decoded
// (get), or a *text when already written out as the answer holds them.
type object map[string]any

// splitDepth is how deep a raw member is split into its members before
// the pieces are decoded and encoded: a path item, a components entry.
const splitDepth = 2

var errNotObject = errors.New("not an object")

// decodeRoot splits a JSON object into its raw members, each a slice of
// b (the last of a repeated key, as a decode keeps it).
func decodeRoot(b []byte) (object, error) {
	raw, err := members(b)
	if err != nil {
		return nil, err
	}
	o := make(object, len(raw))
	for k, v := range raw {
		o[k] = v
	}
	return o, nil
}

// skip is a value decoded by checking it only.
type skip struct{}

func (*skip) UnmarshalJSON([]byte) error { return nil }

// members splits a JSON object into its members' raw values, slices of b
// (not copies): an error when b is not one valid JSON object.
func members(b []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errNotObject
	}
	m := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		start := int(dec.InputOffset())
		if err := dec.Decode(&skip{}); err != nil {
			return nil, err
		}
		v := bytes.TrimLeft(b[start:dec.InputOffset()], " \t\r\n")
		m[key] = json.RawMessage(bytes.TrimLeft(bytes.TrimPrefix(v, []byte(":")), " \t\r\n"))
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errNotObject // more after the object
	}
	return m, nil
}

// get is member k decoded (kept decoded: the caller may change it).
func (o object) get(k string) any {
	switch v := o[k].(type) {
	case json.RawMessage:
		d := decodeValue(v)
		o[k] = d
		return d
	case *text:
		d := decodeValue(v.join())
		o[k] = d
		return d
	default:
		return v
	}
}

// decodeValue decodes valid JSON, numbers kept as written.
func decodeValue(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	d.Decode(&v) // b was checked when the document was split
	return v
}

// isObject reports whether raw JSON is an object.
func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// resolver follows local references (#/components/<kind>/<name>, or any
// JSON pointer into the document) over an object, splitting each raw
// object it passes through once.
type resolver struct {
	root object
	// split are the raw objects split so far, by their first byte: each
	// raw value is a slice of its own bytes, so no two share one
	split map[*byte]map[string]json.RawMessage
}

func newResolver(root object) *resolver {
	return &resolver{root: root, split: map[*byte]map[string]json.RawMessage{}}
}

// at is the value at a JSON pointer's unescaped parts, decoded; nil when
// there is none.
func (r *resolver) at(parts []string) any {
	if len(parts) == 0 {
		return nil
	}
	cur := r.root[parts[0]]
	for _, part := range parts[1:] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[part]
		case json.RawMessage:
			cur = r.member(c, part)
		case *text:
			cur = r.member(c.join(), part)
		default:
			return nil
		}
	}
	switch c := cur.(type) {
	case json.RawMessage:
		return decodeValue(c)
	case *text:
		return decodeValue(c.join())
	}
	return cur
}

// member is a raw object's member, the object split once.
func (r *resolver) member(raw json.RawMessage, name string) any {
	if !isObject(raw) {
		return nil
	}
	m, ok := r.split[&raw[0]]
	if !ok {
		m, _ = members(raw)
		r.split[&raw[0]] = m
	}
	if v, ok := m[name]; ok {
		return v
	}
	return nil
}

// resolve is v as an object, following local references a few levels
// deep; nil when it is none.
func (r *resolver) resolve(v any) map[string]any {
	for range 8 {
		o, _ := v.(map[string]any)
		ref, _ := o["$ref"].(string)
		if ref == "" {
			return o
		}
		parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
		for i, part := range parts {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		}
		v = r.at(parts)
	}
	return nil
}

// encodeObject writes o as one JSON object: keys sorted, each member
// written as a whole decode and encode of it would. The members already
// written (*text) are moved into the answer: o is not to be used again.
func encodeObject(o object) ([]byte, error) {
	var out text
	out.WriteByte('{')
	for i, k := range sortedKeys(o) {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := writeValue(&out, k); err != nil {
			return nil, err
		}
		out.WriteByte(':')
		var err error
		if v, ok := o[k].(json.RawMessage); ok {
			err = writeRaw(&out, v, splitDepth)
		} else {
			err = writeTree(&out, o[k])
		}
		if err != nil {
			return nil, err
		}
		delete(o, k)
	}
	out.WriteByte('}')
	return out.bytes(), nil
}

// writeRaw writes valid raw JSON as its decode and encode would be, an
// object split into its members down to depth levels.
func writeRaw(out *text, raw json.RawMessage, depth int) error {
	if depth == 0 || !isObject(raw) {
		return writeValue(out, decodeValue(raw))
	}
	m, err := members(raw)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := writeValue(out, k); err != nil {
			return err
		}
		out.WriteByte(':')
		if err := writeRaw(out, m[k], depth-1); err != nil {
			return err
		}
		delete(m, k) // written: its bytes may go
	}
	out.WriteByte('}')
	return nil
}

// writeTree writes a decoded value whose objects may hold members already
// written (*text, moved into out), as encoding/json writes a map: keys
// sorted, each key a JSON string.
func writeTree(out *text, v any) error {
	switch v := v.(type) {
	case *text:
		out.take(v)
		return nil
	case map[string]any:
		if v == nil {
			break
		}
		out.WriteByte('{')
		for i, k := range sortedKeys(v) {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := writeValue(out, k); err != nil {
				return err
			}
			out.WriteByte(':')
			if err := writeTree(out, v[k]); err != nil {
				return err
			}
		}
		out.WriteByte('}')
		return nil
	}
	return writeValue(out, v)
}

// writeValue writes a decoded value: keys sorted, numbers as they were
// written, no HTML escaping.
func writeValue(out *text, v any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out.unwrite() // Encode's newline
	return nil
}
