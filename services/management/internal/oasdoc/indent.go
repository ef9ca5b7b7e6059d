package oasdoc

import "github.com/gatehouse/gatehouse/services/management/internal/rawjson"

// The JSON export writes the stored document as encoding/json's Compact
// then Indent (no prefix, two spaces) and a final newline would, without
// either copy: a first walk over the text counts the answer's bytes, a
// second writes them into a slice of that size, so the export holds the
// answer once beside the record it read.

// publicParts is the root object of doc without its x-tyk-api-gateway
// members, as parts of doc's text (and the punctuation between them) that
// read in turn are that object: a public export leaves out exactly what
// rawjson.Delete(doc, Extension) does, without copying the rest.
func publicParts(doc []byte) ([][]byte, error) {
	ms, err := rawjson.Members(doc)
	if err != nil {
		return nil, err
	}
	parts := [][]byte{[]byte("{")}
	kept := 0
	for _, m := range ms {
		if m.Key == Extension {
			continue
		}
		if kept > 0 {
			parts = append(parts, []byte(","))
		}
		parts = append(parts, doc[m.Start:m.ValueEnd])
		kept++
	}
	return append(parts, []byte("}")), nil
}

// indentJSON writes the valid JSON text that parts make, read in turn, two-
// space indented as json.Indent writes its compact form, and a newline.
func indentJSON(parts [][]byte) []byte {
	w := indenter{}
	w.parts(parts)
	w.out = make([]byte, 0, w.n)
	w.write = true
	w.parts(parts)
	return w.out
}

// indenter counts (write unset) or appends to out the indented text.
type indenter struct {
	out   []byte
	n     int
	write bool

	depth      int
	needIndent bool // after '{' or '[': a newline unless the container is empty
	inString   bool
	escaped    bool
}

func (w *indenter) put(c byte) {
	w.n++
	if w.write {
		w.out = append(w.out, c)
	}
}

func (w *indenter) newline() {
	w.put('\n')
	for range w.depth {
		w.put(' ')
		w.put(' ')
	}
}

func (w *indenter) parts(parts [][]byte) {
	w.n, w.depth, w.needIndent, w.inString, w.escaped = 0, 0, false, false, false
	for _, p := range parts {
		w.text(p)
	}
	w.put('\n')
}

func (w *indenter) text(p []byte) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if w.inString {
			// a run of the string up to its next quote or escape
			j := i
			for !w.escaped && j < len(p) && p[j] != '"' && p[j] != '\\' {
				j++
			}
			if j > i {
				if w.write {
					w.out = append(w.out, p[i:j]...)
				}
				w.n += j - i
				i = j - 1
				continue
			}
			w.put(c)
			switch {
			case w.escaped:
				w.escaped = false
			case c == '\\':
				w.escaped = true
			case c == '"':
				w.inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if w.needIndent && c != '}' && c != ']' {
			w.needIndent = false
			w.depth++
			w.newline()
		}
		switch c {
		case '"':
			w.inString = true
			w.put(c)
		case '{', '[':
			w.needIndent = true
			w.put(c)
		case ',':
			w.put(c)
			w.newline()
		case ':':
			w.put(c)
			w.put(' ')
		case '}', ']':
			if w.needIndent {
				w.needIndent = false // an empty container stays {} or []
			} else {
				w.depth--
				w.newline()
			}
			w.put(c)
		default:
			w.put(c)
		}
	}
}
