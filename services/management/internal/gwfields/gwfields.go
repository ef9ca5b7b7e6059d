// Package gwfields knows the JSON type a Tyk Gateway decodes each field of
// a security policy and of a classic API definition with (issue 32): the
// gateway unmarshals /system/policies and /system/apis into its own Go
// structs (user.Policy, apidef.APIDefinition) with encoding/json, so one
// record whose "rate" is "fast", whose "active" is "yes" or whose
// version_data.versions.Default.extended_paths.url_rewrites[0].method is
// 5 fails its whole list. Management stores both documents verbatim;
// Check refuses, at intake, a document with a field of the wrong type
// (naming its full path), and the lists skip a record stored before the
// check that fails it.
//
// The tables (policy_table.go, classic_table.go) restate the gateway's
// structs to their leaves, nested structs, maps and slices included; a
// field they do not name is free-form to the gateway (interface{},
// json.RawMessage) or not one of its fields. Member names match as
// encoding/json matches them: exactly, else case-insensitively.
package gwfields

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind is the JSON a Go field type accepts. Null is accepted by every kind
// but DurationText (encoding/json leaves the field at its zero value).
type Kind int

const (
	String Kind = iota + 1
	Bool
	Number   // float64: any number a float64 holds
	Int      // int, int64: no fraction, no exponent
	Unsigned // uint, uint64: a non-negative integer
	Uint16   // uint16: 0 to 65535
	Object   // a struct or a map
	Array    // a slice
	// ObjectID is a Mongo object id (model.ObjectID, decoded by mgo's
	// bson.ObjectId): "" or exactly 24 hexadecimal digits, unescaped. (The
	// gateway also takes {"$oid":…}; intake does not.)
	ObjectID
	// Timestamp is a time.Time: an RFC 3339 string, unescaped.
	Timestamp
	// DurationText is Tyk's ReadableDuration: any Go-quoted string ("1m";
	// an unparsable one reads as zero); a number or null fails its decode.
	DurationText
)

var kindNames = map[Kind]string{String: "a string", Bool: "a boolean", Number: "a number", Int: "an integer",
	Unsigned: "a non-negative integer", Uint16: "an integer from 0 to 65535", Object: "an object", Array: "an array",
	ObjectID: `an object id ("" or 24 hexadecimal digits)`, Timestamp: "an RFC 3339 time (a string)",
	DurationText: `a duration string (e.g. "1m")`}

// Table maps field paths to kinds: member names joined by ".", "*" for any
// member of a map, "[]" for the elements of an array
// ("access_rights.*.allowed_urls[].methods[]").
type Table map[string]Kind

// Error names the first field of a document of the wrong type by its path
// in the document ("version_data.versions.Default.name").
type Error struct {
	Path string
	Want Kind
}

func (e *Error) Error() string { return e.Path + " must be " + kindNames[e.Want] }

// Policy is what a gateway's user.Policy decodes; Classic an
// apidef.APIDefinition.
var (
	Policy  = compile(policyTable)
	Classic = compile(classicTable)
)

// Checker is a compiled Table.
type Checker struct {
	kinds Table
	// members maps a table path to its struct members' table paths, by
	// exact name and by folded name (encoding/json's case-insensitive
	// match); a map's path has the single member "*".
	members map[string]*members
}

type members struct {
	exact, folded map[string]string
}

func compile(t Table) *Checker {
	c := &Checker{kinds: t, members: map[string]*members{}}
	for p := range t {
		parent, name := split(p)
		if name == "" {
			continue
		}
		m := c.members[parent]
		if m == nil {
			m = &members{exact: map[string]string{}, folded: map[string]string{}}
			c.members[parent] = m
		}
		m.exact[name] = p
		m.folded[fold(name)] = p
	}
	return c
}

// split cuts a table path into its parent and its last member name ("" for
// an array element: the parent of "a[]" is "a" itself, looked up by
// element).
func split(p string) (parent, name string) {
	if len(p) >= 2 && p[len(p)-2:] == "[]" {
		return p, ""
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '.' {
			return p[:i], p[i+1:]
		}
	}
	return "", p
}

// Check walks doc (one JSON object, already known valid) and returns an
// *Error for the first listed field whose value is of the wrong kind.
func (c *Checker) Check(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	w := walker{c: c, dec: dec, doc: doc}
	err := w.value("", "", true)
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return nil // malformed JSON is the caller's check
}

// member is the table path of member name under the table path parent.
func (c *Checker) member(parent, name string) (string, bool) {
	m := c.members[parent]
	if m == nil {
		return "", false
	}
	if p, ok := m.exact[name]; ok {
		return p, true
	}
	if p, ok := m.exact["*"]; ok {
		return p, true
	}
	p, ok := m.folded[fold(name)]
	return p, ok
}

// walker reads one document token by token.
type walker struct {
	c   *Checker
	dec *json.Decoder
	doc []byte
}

// value reads one value at table path path (listed tells whether the
// table knows it), actual being the member names and indexes that lead to
// it (for the error).
func (w *walker) value(path, actual string, listed bool) error {
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	if !listed {
		return w.skip(tok)
	}
	if want, ok := w.c.kinds[path]; ok && path != "" {
		raw := bytes.TrimLeft(w.doc[start:w.dec.InputOffset()], " \t\r\n,:")
		if !kindOf(tok, raw, want) {
			return &Error{Path: actual, Want: want}
		}
	}
	switch tok {
	case json.Delim('{'):
		for w.dec.More() {
			name, err := w.dec.Token()
			if err != nil {
				return err
			}
			p, ok := w.c.member(path, name.(string))
			next := name.(string)
			if actual != "" {
				next = actual + "." + next
			}
			if err := w.value(p, next, ok); err != nil {
				return err
			}
		}
		_, err = w.dec.Token()
		return err
	case json.Delim('['):
		elem := path + "[]"
		_, listed := w.c.kinds[elem]
		for i := 0; w.dec.More(); i++ {
			if err := w.value(elem, actual+"["+strconv.Itoa(i)+"]", listed); err != nil {
				return err
			}
		}
		_, err = w.dec.Token()
		return err
	}
	return nil
}

// kindOf reports whether the token opening a value (raw, as the document
// spells it) is of kind k.
func kindOf(tok json.Token, raw []byte, k Kind) bool {
	if tok == nil {
		return k != DurationText
	}
	switch v := tok.(type) {
	case string:
		switch k {
		case String:
			return true
		case ObjectID:
			_, err := hex.DecodeString(string(raw[1 : len(raw)-1]))
			return len(raw) == 2 || (len(raw) == 26 && err == nil)
		case Timestamp:
			var t time.Time
			return t.UnmarshalJSON(raw) == nil
		case DurationText:
			_, err := strconv.Unquote(string(raw))
			return err == nil
		}
		return false
	case bool:
		return k == Bool
	case json.Number:
		var err error
		switch k {
		case Number:
			_, err = strconv.ParseFloat(string(v), 64)
		case Int:
			_, err = strconv.ParseInt(string(v), 10, 64)
		case Unsigned:
			_, err = strconv.ParseUint(string(v), 10, 64)
		case Uint16:
			_, err = strconv.ParseUint(string(v), 10, 16)
		default:
			return false
		}
		return err == nil
	case json.Delim:
		return (v == '{' && k == Object) || (v == '[' && k == Array)
	}
	return false
}

// skip reads past the rest of a value whose first token is tok.
func (w *walker) skip(tok json.Token) error {
	depth := 0
	for {
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
		var err error
		if tok, err = w.dec.Token(); err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// fold is encoding/json's case-insensitive form of a member name: two names
// match when their folds are equal (bytes.EqualFold), ASCII letters upper
// cased and every other rune the smallest of its Unicode fold orbit.
func fold(name string) string {
	var b []byte
	for _, r := range name {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b = append(b, byte(r))
			continue
		}
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}
