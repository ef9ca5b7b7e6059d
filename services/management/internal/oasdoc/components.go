package oasdoc

import (
	"bytes"
	"hash/maphash"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// Components are not decoded whole either (batches.go): a component schema
// in kin-openapi's model takes about 1 KiB where "S1":{"type":"string"}
// takes 25 bytes. componentIndex knows where each entry's text is; a batch
// (of components to check, or of paths) is given only the entries its text
// references, directly or through other entries, decoded for it alone, and
// every security scheme (security requirements name them). A reference is
// read as kin-openapi's loader reads it (componentRef); one it cannot
// follow (not to #/components/<kind>/<name> or into such an entry, a name
// with / ~ % \ or ", one that does not parse), or entries that bring more
// than a batch's worth of text, give up: the whole document is checked
// then. An external reference, or one that does not parse, brings
// nothing: the batch's resolution refuses it, as the whole document's does. Leaving an entry out is always safe: a batch that needs it fails
// its resolution.

// componentKinds are the maps of a Components object, in the order they
// are written for a batch.
var componentKinds = []string{"schemas", "parameters", "headers", "requestBodies", "responses", "securitySchemes", "examples", "links", "callbacks"}

// securitySchemesKind is securitySchemes' index in componentKinds.
const securitySchemesKind = 5

// componentIndex locates the entries of a components object.
type componentIndex struct {
	text    []byte // the components object
	entries []componentEntry
	seed    maphash.Seed
	byRef   map[uint64]int32 // hash of kind/name → index in entries
	schemes []int32          // the securitySchemes entries
	// extensions are the object's own x- members, as written (key and
	// value), given to every batch
	extensions [][]byte
	limit      int // the most text the entries a batch references may bring
	// deep is set once a reference into an entry has been followed: the
	// entry is given to the batch, and kin-openapi's loader finds the part
	// in it as in the whole document, but whether it finds it may depend
	// on what the loader resolved before, so a problem in resolving a
	// batch of such a document is left to the whole check (a problem of
	// validation, in a batch that resolved, is one of the whole document,
	// which may yet fail to resolve first)
	deep bool
	// other, when set, follows a reference that is not to the components
	// (a batch's references into paths: pathrefs.go), reporting false when
	// it cannot
	other func(ref []byte) bool
}

// componentEntry is one entry: its kind and where its key (from its opening
// quote) and value are in the text.
type componentEntry struct {
	kind       int8
	keyStart   int32
	valueStart int32
	valueEnd   int32
}

// offset is where part, a subslice of text, starts in it; -1 when part is
// not one (a key decoded from escapes).
func offset(text, part []byte) int {
	off := cap(text) - cap(part)
	if len(part) == 0 || off < 0 || off+len(part) > len(text) || &text[off] != &part[0] {
		return -1
	}
	return off
}

// indexComponents indexes the components object text (nil: none); ok is
// false when it holds what the index does not handle (names with escapes or
// / ~ % characters, a kind that is not an object, one name twice,
// extensions with escapes or of more than a batch's text).
func indexComponents(text []byte, limit int) (ix *componentIndex, ok bool) {
	ix = &componentIndex{text: text, seed: maphash.MakeSeed(), byRef: map[uint64]int32{}, limit: limit}
	if text == nil {
		return ix, true
	}
	var seen [9]bool
	extensionsSize := 0
	err := rawjson.Each(text, func(key, value []byte) error {
		if isExtension(key) {
			at, end := offset(text, key), offset(text, value)+len(value)
			if extensionsSize += len(value); at < 1 || extensionsSize > limit {
				return errUnsupported
			}
			ix.extensions = append(ix.extensions, text[at-1:end])
			return nil
		}
		kind := slices.Index(componentKinds, string(key))
		if kind < 0 || seen[kind] || value[0] != '{' {
			return errUnsupported
		}
		seen[kind] = true
		return rawjson.Each(value, func(name, entry []byte) error {
			at, vs := offset(text, name), offset(text, entry)
			if at < 1 || vs < 0 || bytes.ContainsAny(name, `/~%"\`) {
				return errUnsupported
			}
			h := ix.hash(kind, name)
			if _, dup := ix.byRef[h]; dup {
				return errUnsupported // one name twice, or two of one hash
			}
			i := int32(len(ix.entries))
			ix.byRef[h] = i
			ix.entries = append(ix.entries, componentEntry{kind: int8(kind), keyStart: int32(at - 1), valueStart: int32(vs), valueEnd: int32(vs + len(entry))})
			if kind == securitySchemesKind {
				ix.schemes = append(ix.schemes, i)
			}
			return nil
		})
	})
	return ix, err == nil
}

func (ix *componentIndex) hash(kind int, name []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(ix.seed)
	h.WriteByte(byte(kind))
	h.Write(name)
	return h.Sum64()
}

// closure is the set of entries a batch needs: its own (of a batch of
// components), those the texts and they reference, directly or through
// other entries, and every security scheme; false when a reference cannot
// be followed or they bring more than the limit of text.
func (ix *componentIndex) closure(own []int32, texts [][]byte) (map[int32]bool, bool) {
	set := map[int32]bool{}
	var queue []int32
	size := 0
	add := func(i int32) {
		if !set[i] {
			set[i] = true
			e := ix.entries[i]
			size += int(e.valueEnd - e.keyStart)
			queue = append(queue, i)
		}
	}
	follow := func(text []byte) bool {
		for _, ref := range refsIn(text) {
			i, found, ok := ix.lookup(ref)
			if !ok && (ix.other != nil && ix.other(ref) || unresolvable(ref)) {
				continue // the batch's resolution names it
			}
			if !ok {
				return false
			}
			if found { // else the batch's resolution names the missing entry
				add(i)
			}
		}
		return true
	}
	for _, i := range own {
		add(i)
	}
	for _, i := range ix.schemes {
		add(i)
	}
	for _, t := range texts {
		if !follow(t) {
			return nil, false
		}
	}
	for len(queue) > 0 {
		e := ix.entries[queue[0]]
		queue = queue[1:]
		if !follow(ix.text[e.valueStart:e.valueEnd]) || size > ix.limit {
			return nil, false
		}
	}
	return set, size <= ix.limit
}

// lookup finds the entry a reference names; ok is false when the reference
// is not one the index follows.
func (ix *componentIndex) lookup(ref []byte) (i int32, found, ok bool) {
	kind, name, deep, ok := componentRef(ref)
	if !ok {
		return 0, false, false
	}
	ix.deep = ix.deep || deep
	i, found = ix.byRef[ix.hash(kind, name)]
	if !found {
		return 0, false, true
	}
	e := ix.entries[i]
	// the hash found it: the name must be the entry's own
	if int(e.kind) != kind || !bytes.Equal(ix.text[e.keyStart+1:e.keyStart+1+int32(len(name))], name) || ix.text[e.keyStart+1+int32(len(name))] != '"' {
		return 0, false, false
	}
	return i, true, true
}

// componentRef reads raw, a reference as written in a JSON string, as
// kin-openapi's loader resolves one in the document: the JSON string
// decoded, the fragment of the URI it is (%-escapes decoded by url.Parse),
// then each of the fragment's /-separated parts with its JSON-pointer
// escapes (~1 for /, ~0 for ~) decoded. ok is false unless it names an
// entry of a components map, by a name without / ~ % \ or "; deep when it
// names a part of that entry (#/components/schemas/Pet/properties/id).
func componentRef(raw []byte) (kind int, name []byte, deep, ok bool) {
	const prefix = "#/components/"
	if !bytes.ContainsAny(raw, `\%~`) { // as written
		rest, ok := bytes.CutPrefix(raw, []byte(prefix))
		kindName, after, found := bytes.Cut(rest, []byte("/"))
		name, _, deep = bytes.Cut(after, []byte("/"))
		kind = slices.Index(componentKinds, string(kindName))
		if !ok || !found || kind < 0 || len(name) == 0 {
			return 0, nil, false, false
		}
		return kind, name, deep, true
	}
	ref, isString := rawjson.String(append(append([]byte{'"'}, raw...), '"'))
	if !isString || !strings.HasPrefix(ref, "#") {
		return 0, nil, false, false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return 0, nil, false, false
	}
	parts := strings.Split(u.Fragment, "/")
	if len(parts) < 4 || parts[0] != "" || unescapeRef(parts[1]) != "components" {
		return 0, nil, false, false
	}
	kind = slices.Index(componentKinds, unescapeRef(parts[2]))
	n := unescapeRef(parts[3])
	if kind < 0 || n == "" || strings.ContainsAny(n, `/~%\"`) {
		return 0, nil, false, false
	}
	return kind, []byte(n), len(parts) > 4, true
}

// unresolvable reports whether raw, a reference as written in a JSON
// string, is one kin-openapi's loader refuses wherever it resolves one: to
// another document (it does not start with #: the loader takes no external
// reference here), or one that does not parse as a URI.
func unresolvable(raw []byte) bool {
	ref, isString := rawjson.String(append(append([]byte{'"'}, raw...), '"'))
	if raw == nil || !isString || ref == "" {
		return false
	}
	_, err := url.Parse(ref)
	return ref[0] != '#' || err != nil
}

// unescapeRef decodes a JSON-pointer part's escapes as kin-openapi does.
func unescapeRef(part string) string {
	return strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
}

// refsIn returns the values of the "$ref" keys in text, as written (a
// value with an escape is returned as is, and found nowhere).
func refsIn(text []byte) [][]byte {
	var out [][]byte
	key := []byte(`"$ref"`)
	for {
		i := bytes.Index(text, key)
		if i < 0 {
			return out
		}
		text = text[i+len(key):]
		j := 0
		for j < len(text) && strings.IndexByte(" \t\r\n", text[j]) >= 0 {
			j++
		}
		if j >= len(text) || text[j] != ':' {
			continue
		}
		j++
		for j < len(text) && strings.IndexByte(" \t\r\n", text[j]) >= 0 {
			j++
		}
		if j >= len(text) || text[j] != '"' {
			continue // not a string: the decoder refuses it, or it is no reference
		}
		end, err := rawjson.SkipString(text, j)
		if err != nil {
			return append(out, nil) // cannot be followed
		}
		out = append(out, text[j+1:end-1])
		text = text[end:]
	}
}

// components decodes the entries of set as a Components object, as the
// fast decoder decodes the document's (the entries of a kind in document
// order); nil when the document has none.
func (ix *componentIndex) components(set map[int32]bool) (*openapi3.Components, error) {
	if ix.text == nil {
		return nil, nil
	}
	order := make([]int32, 0, len(set))
	for i := range set {
		order = append(order, i)
	}
	slices.Sort(order) // entries are indexed kind by kind, in document order
	var b []byte
	b = append(b, '{')
	kind := int8(-1)
	for _, i := range order {
		e := ix.entries[i]
		if e.kind != kind {
			if kind >= 0 {
				b = append(b, "},"...)
			}
			kind = e.kind
			b = append(b, '"')
			b = append(b, componentKinds[kind]...)
			b = append(b, `":{`...)
		} else {
			b = append(b, ',')
		}
		b = append(b, ix.text[e.keyStart:e.valueEnd]...)
	}
	if kind >= 0 {
		b = append(b, '}')
	}
	for i, x := range ix.extensions {
		if kind >= 0 || i > 0 {
			b = append(b, ',')
		}
		b = append(b, x...)
	}
	b = append(b, '}')
	var c *openapi3.Components
	s := &scanner{data: b}
	return c, decodeField(s, &c, s.components)
}
