package oasdoc

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// How far references may expand a document before it is checked. A
// reference to a whole component entry, or to a part of a component
// schema, is resolved and judged once however often it is used
// (resolve.go, standins.go). kin-openapi walks what any other reference
// points to again at every use: a part of a path item
// (#/paths/~1a/get/parameters/0/schema), a path item when some reference
// reads into a path's parts, a part of a component other than a schema
// (#/components/parameters/Q/schema). So a 245 KB document of one large
// schema inside a parameter component, referenced from 1,000 paths through
// the parameter's part, took about 2 s of CPU to check. Each such
// reference is charged the size of the entry it reads into (the path item,
// or the component entry), and a document whose charges come to more than
// ExpansionFactor times its size plus ExpansionFloor is refused before
// anything decodes it. Checking then walks at most about that many bytes
// more (BenchmarkExpansionLimit: 0.05-0.5 s of CPU for documents of 0.1-1
// MB at the bound). ExpansionFactor is the heap bound's factor (peak heap
// at most 8 times a document); ExpansionFloor leaves a document every
// reference it could reasonably hold (a bundler's references into paths
// whose parts reach a large part of the components: a few dozen of 100 KB).
const (
	ExpansionFactor = 8
	ExpansionFloor  = 4 << 20
)

// checkExpansion refuses a document (valid JSON) whose references to parts
// of entries, charged as above, come to more than the bound, naming the
// figures. A reference is charged what a walk of its entry reaches: the
// entry and every entry it references, directly or through others (the
// loader walks what those reference again too), each counted once. It
// scans the text about once, and each entry's text once for each distinct
// entry charged, stopping at the bound; references it cannot place in the
// document are not charged (the check refuses those, naming them).
func checkExpansion(doc []byte) error {
	if !referencesIn(doc) {
		return nil
	}
	var charged []entryKey // an entry per reference to be charged
	var pathItems []entryKey
	anyPathPart := false
	eachRef(doc, func(ref string) {
		e, part, ok := entryOf(ref)
		switch {
		case !ok:
		case e.kind == "paths" && !part:
			pathItems = append(pathItems, e)
		case e.kind == "paths":
			anyPathPart = true
			charged = append(charged, e)
		case part && e.kind != "schemas":
			charged = append(charged, e)
		}
	})
	if anyPathPart {
		charged = append(charged, pathItems...)
	}
	if len(charged) == 0 {
		return nil
	}
	g := entryGraph{text: entryTexts(doc), reach: map[entryKey]int{}}
	limit := ExpansionFactor*len(doc) + ExpansionFloor
	total := 0
	for _, e := range charged {
		total += g.reached(e, limit-total)
		if total > limit {
			return invalid("the document's %d references into parts of path items or of components other than schemas would have it walked as more than %d bytes (%d times its size and %d): each is walked again at every use, with all it references; reference whole components instead", len(charged), limit, ExpansionFactor, ExpansionFloor)
		}
	}
	return nil
}

// entryKey names an entry of the document: a path item (kind "paths") or
// a component.
type entryKey struct{ kind, name string }

// entryOf returns the entry a local reference points into, and whether it
// points to a part of it rather than the whole.
func entryOf(ref string) (e entryKey, part, ok bool) {
	tokens, ok := pointer(ref)
	switch {
	case !ok:
		return entryKey{}, false, false
	case tokens[0] == "paths" && len(tokens) >= 2:
		return entryKey{"paths", tokens[1]}, len(tokens) > 2, true
	case tokens[0] == "components" && len(tokens) >= 3:
		return entryKey{tokens[1], tokens[2]}, len(tokens) > 3, true
	}
	return entryKey{}, false, false
}

// entryTexts returns the text of every path item and component of doc.
func entryTexts(doc []byte) map[entryKey][]byte {
	out := map[entryKey][]byte{}
	if paths, ok, _ := rawjson.Lookup(doc, "paths"); ok {
		_ = rawjson.Each(paths, func(key, value []byte) error {
			out[entryKey{"paths", string(key)}] = value
			return nil
		})
	}
	if components, ok, _ := rawjson.Lookup(doc, "components"); ok {
		_ = rawjson.Each(components, func(kind, entries []byte) error {
			k := string(kind)
			return rawjson.Each(entries, func(name, value []byte) error {
				out[entryKey{k, string(name)}] = value
				return nil
			})
		})
	}
	return out
}

// entryGraph finds what a walk of an entry reaches, by the references in
// the entries' text.
type entryGraph struct {
	text  map[entryKey][]byte
	reach map[entryKey]int // the bytes reached from an entry, once known
}

// reached returns the bytes of the entries a walk of e reaches (e
// included, each once), or a figure over budget once it exceeds it.
func (g *entryGraph) reached(e entryKey, budget int) int {
	if n, ok := g.reach[e]; ok {
		return n
	}
	if _, ok := g.text[e]; !ok {
		return 0
	}
	seen := map[entryKey]bool{e: true}
	queue := []entryKey{e}
	n := 0
	for len(queue) > 0 && n <= budget {
		text := g.text[queue[0]]
		queue = queue[1:]
		n += len(text)
		eachRef(text, func(ref string) {
			if next, _, ok := entryOf(ref); ok && !seen[next] {
				if _, exists := g.text[next]; exists {
					seen[next] = true
					queue = append(queue, next)
				}
			}
		})
	}
	if n <= budget {
		g.reach[e] = n
	}
	return n
}

// eachRef calls fn with the value of every "$ref" member of doc (valid
// JSON) whose value is a string, at any depth, in one pass over the text:
// a string followed by a colon is a key.
func eachRef(doc []byte, fn func(ref string)) {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		end, err := rawjson.SkipString(doc, i)
		if err != nil {
			return
		}
		j := rawjson.SkipSpace(doc, end)
		if j >= len(doc) || doc[j] != ':' || !isRefKey(doc[i:end]) {
			i = end - 1
			continue
		}
		v := rawjson.SkipSpace(doc, j+1)
		if v < len(doc) && doc[v] == '"' {
			vend, err := rawjson.SkipString(doc, v)
			if err != nil {
				return
			}
			if ref, ok := rawjson.String(doc[v:vend]); ok {
				fn(ref)
			}
			end = vend
		}
		i = end - 1
	}
}

// isRefKey tells whether the quoted key decodes to $ref.
func isRefKey(quoted []byte) bool {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted) == `"$ref"`
	}
	k, ok := rawjson.String(quoted)
	return ok && k == "$ref"
}

// pointer returns the tokens of a local reference (#/a/b), its fragment
// percent-decoded and each token's ~1 and ~0 read as / and ~, as
// kin-openapi reads them; ok is false for any other reference.
func pointer(ref string) (tokens []string, ok bool) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	fragment := ref[1:]
	if unescaped, err := url.PathUnescape(fragment); err == nil {
		fragment = unescaped
	}
	tokens = strings.Split(fragment[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, true
}
