// Package gwfields knows the JSON type a Tyk Gateway decodes each field of
// a security policy and of a classic API definition with (issue 32): the
// gateway unmarshals /system/policies and /system/apis into its own Go
// structs (user.Policy, apidef.APIDefinition), so one record whose "rate"
// is "fast" or whose "active" is "yes" fails its whole list. Management
// stores both documents verbatim; Check refuses, at intake, a document with
// a field of the wrong type (naming it), and the lists skip a record stored
// before the check that fails it. The tables (policy.go, classic.go)
// restate the gateway's field types as JSON kinds; fields they do not name
// are not checked (free-form to the gateway, or not yet listed).
package gwfields

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// Kind is the JSON a Go field type accepts (null is accepted by every one:
// the gateway leaves the field at its zero value).
type Kind int

const (
	String Kind = iota + 1
	Bool
	Number   // float64
	Int      // a signed integer (int, int64): no fraction, no exponent
	Unsigned // uint, uint16, uint64: a non-negative integer
	Object   // a struct or a map
	Array    // a slice
)

var kindNames = map[Kind]string{String: "a string", Bool: "a boolean", Number: "a number", Int: "an integer",
	Unsigned: "a non-negative integer", Object: "an object", Array: "an array"}

// Table maps field paths to kinds: dot-separated member names, "*" for any
// member of a map, "[]" for the elements of an array ("access_rights.*.versions[]").
type Table map[string]Kind

// Error names the first field of a document of the wrong type.
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
	kinds    Table
	prefixes map[string]bool // every path that has a listed path under it
}

func compile(t Table) *Checker {
	c := &Checker{kinds: t, prefixes: map[string]bool{}}
	for p := range t {
		for i := range p {
			if p[i] == '.' || p[i] == '[' {
				c.prefixes[p[:i]] = true
			}
		}
	}
	return c
}

// Check walks doc (one JSON object, already known valid) and returns an
// *Error for the first listed field whose value is of the wrong kind.
func (c *Checker) Check(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	err := c.value(dec, "", "")
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return nil // malformed JSON is the caller's check
}

// listed reports whether path is checked or has checked paths under it.
func (c *Checker) listed(path string) bool {
	_, ok := c.kinds[path]
	return ok || c.prefixes[path]
}

// child is the table path of member name under parent.
func (c *Checker) child(parent, name string) (string, bool) {
	join := func(n string) string {
		if parent == "" {
			return n
		}
		return parent + "." + n
	}
	if p := join(name); c.listed(p) {
		return p, true
	}
	if p := join("*"); c.listed(p) {
		return p, true
	}
	return "", false
}

// value reads one value at table path path, actual being the member
// names and indexes that lead to it (for the error).
func (c *Checker) value(dec *json.Decoder, path, actual string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	want, checked := c.kinds[path]
	if checked && path != "" && tok != nil && !kindOf(tok, want) {
		return &Error{Path: actual, Want: want}
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return err
			}
			p, ok := c.child(path, name.(string))
			if !ok {
				if err := skip(dec); err != nil {
					return err
				}
				continue
			}
			next := name.(string)
			if actual != "" {
				next = actual + "." + next
			}
			if err := c.value(dec, p, next); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		elem := path + "[]"
		for i := 0; dec.More(); i++ {
			if !c.listed(elem) {
				if err := skip(dec); err != nil {
					return err
				}
				continue
			}
			if err := c.value(dec, elem, actual+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// kindOf reports whether the token opening a value is of kind k.
func kindOf(tok json.Token, k Kind) bool {
	switch v := tok.(type) {
	case string:
		return k == String
	case bool:
		return k == Bool
	case json.Number:
		switch k {
		case Number:
			return true
		case Int:
			_, err := strconv.ParseInt(string(v), 10, 64)
			return err == nil
		case Unsigned:
			_, err := strconv.ParseUint(string(v), 10, 64)
			return err == nil
		}
		return false
	case json.Delim:
		return (v == '{' && k == Object) || (v == '[' && k == Array)
	}
	return false
}

// skip reads past one value.
func skip(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
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
	}
}
