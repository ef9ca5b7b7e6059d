// Package jsonstrict checks a JSON document against the shape its reader
// expects, before anything decodes it, and reports every problem it finds
// as a Problem: the JSON path of the member at fault and the kind of fault.
//
// The rules are those of the REST contract for request bodies: exactly one
// JSON value (data after it is malformed), valid UTF-8, no key twice in an
// object, nesting at most MaxDepth deep, and each member the reader knows of
// in its JSON type (a number or boolean written as a string, a fraction or
// an out-of-range number where a whole number is wanted, an object for an
// array and so on is a fault). Members the shape does not name need only be
// valid JSON. pkg/restfacade checks every body against its proto message's
// fields with it; the portal checks its bodies against its own names and
// words the problems as its API does.
package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDepth is how deeply a document's arrays and objects may nest.
const MaxDepth = 100

// MaxValues is how many JSON values a document may hold in all (CONTRACT §0
// "Resource bounds": documents stored verbatim are counted before any
// decoder builds structures from them).
const MaxValues = 1_000_000

// A free-form value (Shape.FreeForm: a member decoded into structures
// whatever it holds, such as a google.protobuf.Struct) holds at most
// MaxFreeMembers members and elements in total, at any depth, and takes at
// most MaxFreeBytes of the document.
const (
	MaxFreeMembers = 1000
	MaxFreeBytes   = 64 << 10
	// FreeTooLargeText is what a FreeTooLarge problem says after the path.
	FreeTooLargeText = "too large: at most 1000 members and elements in all, and 64 KiB"
)

// Kind is the kind of a Problem.
type Kind uint8

// The kinds of problem, in no particular order.
const (
	Empty          Kind = iota + 1 // nothing but white space
	InvalidUTF8                    // bytes that are not UTF-8
	Syntax                         // not JSON: Detail says why, Offset where
	Trailing                       // data after the first value (Offset where)
	Duplicate                      // a key twice in one object
	DuplicateField                 // one field named twice (by two of its names)
	TooDeep                        // nested more than MaxDepth deep
	WrongType                      // Want names the JSON type wanted, Got the one found
	Null                           // null where a value is needed
	OutOfRange                     // a number beyond its type's range
	NotWhole                       // a fraction where a whole number is wanted
	TooManyValues                  // more than MaxValues values in the document
	FreeTooLarge                   // a free-form value over MaxFreeMembers or MaxFreeBytes
)

// Problem is one fault of a document. Path is the JSON path of the value at
// fault ("data.attributes.max_length", "tags[2]"), empty for the document
// as a whole.
type Problem struct {
	Path string
	Kind Kind
	// Want and Got are the JSON types wanted and found ("a string", "an
	// object"), for WrongType and Null.
	Want, Got string
	// Detail is the JSON decoder's words for a Syntax problem.
	Detail string
	// Offset is where a Syntax or Trailing problem is, in bytes from the
	// start, as encoding/json's Unmarshal counts it.
	Offset int64
}

// Error words the problem in the REST facade's terms: the path, then what
// is wrong ("data.attributes.max_length: must be a whole number, not a
// string"); a problem of the whole body names the body.
func (p *Problem) Error() string {
	var msg string
	switch p.Kind {
	case Empty, InvalidUTF8, Syntax, Trailing, TooManyValues:
		return wholeBody[p.Kind] + p.Detail
	case Null:
		if p.Path == "" {
			return "the request body must be " + strings.Replace(p.Want, "an object", "a JSON object", 1) + ", not null"
		}
		msg = "must not be null"
	case WrongType:
		msg = "must be " + p.Want + ", not " + p.Got
	case Duplicate, DuplicateField, TooDeep, OutOfRange, NotWhole, FreeTooLarge:
		msg = member[p.Kind]
	default:
		msg = "invalid"
	}
	if p.Path == "" {
		return msg
	}
	return p.Path + ": " + msg
}

// wholeBody words the problems of the body as a whole (Detail follows).
var wholeBody = map[Kind]string{
	Empty:         "the request body is empty",
	InvalidUTF8:   "the request body is not valid UTF-8",
	Syntax:        "the request body is not valid JSON: ",
	Trailing:      "the request body is not valid JSON: data after the first JSON value",
	TooManyValues: fmt.Sprintf("the document holds more than %d JSON values", MaxValues),
}

// member words the problems of a member that need no more than their kind.
var member = map[Kind]string{
	Duplicate:      "duplicate key",
	DuplicateField: "duplicate key (the field is named twice)",
	TooDeep:        fmt.Sprintf("nested more than %d levels deep", MaxDepth),
	OutOfRange:     "number out of range",
	NotWhole:       "must be a whole number",
	FreeTooLarge:   FreeTooLargeText,
}

// Error is a document's problems, in the order they stand in it.
type Error struct{ Problems []Problem }

// Error words every problem, separated by "; ".
func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i := range e.Problems {
		parts[i] = e.Problems[i].Error()
	}
	return strings.Join(parts, "; ")
}

// First returns the first problem of err, an *Error (nil when err is not one).
func First(err error) *Problem {
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) == 0 {
		return nil
	}
	return &e.Problems[0]
}

// Type is the JSON type a Shape wants.
type Type uint8

// The types a value may be asked to have.
const (
	Any            Type = iota // any JSON value
	Object                     // an object; Shape.Member says what each member must be
	Map                        // an object whose every member is a Shape.Elem
	Array                      // an array of Shape.Elem
	String                     // a string
	Bool                       // true or false
	Number                     // a finite number (Bits 32: within float32's range)
	Integer                    // a whole number within Bits (32 or 64), Unsigned or not
	StringOrNumber             // a string or a number (an enum's name or number)
)

// Shape says what a JSON value must be. A nil *Shape is Any. Null always
// stands for an absent member; elsewhere it is a fault unless the shape is
// Any or ElemNull allows it.
type Shape struct {
	Type     Type
	Bits     int    // Number and Integer: 32 or 64 (0 is 64)
	Unsigned bool   // Integer: not below zero
	Elem     *Shape // Array: each element; Map: each member's value
	ElemNull bool   // Array and Map: an element may be null
	// FreeForm marks a value the reader decodes into structures whatever it
	// holds: it is bounded by MaxFreeMembers and MaxFreeBytes.
	FreeForm bool
	// Member gives the shape of an Object's member named key (nil: any
	// value) and, when the key names a field, a number for the field that
	// is the same under each of its names (0 otherwise), so that a field
	// named twice is a fault. A nil Member makes every member any value.
	Member func(key string) (s *Shape, field int)
}

// AnyValue is a shape for any one JSON value.
var AnyValue = &Shape{Type: Any}

// want names the JSON type s wants, as Problem.Want.
func (s *Shape) want() string {
	switch s.Type {
	case Object, Map:
		return "an object"
	case Array:
		return "an array"
	case String, StringOrNumber:
		return "a string"
	case Bool:
		return "true or false"
	case Number:
		return "a number"
	case Integer:
		return "a whole number"
	}
	return "a value"
}

// Check reports whether data is one JSON value of shape s (nil: any), as
// nil or an *Error listing every problem found. A syntax error ends the
// search: the problems before it are listed, then it. A document of more
// than MaxValues values is refused for that alone, before it is walked.
func Check(data []byte, s *Shape) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{[]Problem{{Kind: Empty}}}
	}
	if !utf8.Valid(data) {
		return &Error{[]Problem{{Kind: InvalidUTF8}}}
	}
	if overMaxValues(data) {
		return &Error{[]Problem{{Kind: TooManyValues}}}
	}
	w := walker{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	w.dec.UseNumber()
	if tok, ok := w.next(); ok {
		if tok == nil && s != nil && s.Type != Any {
			w.add(Problem{Kind: Null, Want: s.want(), Got: "null"})
		}
		if w.value("", s, tok) {
			w.end()
		}
	}
	if len(w.problems) == 0 {
		return nil
	}
	return &Error{w.problems}
}

type walker struct {
	data     []byte
	dec      *json.Decoder
	depth    int
	problems []Problem
	values   int // read so far
	// free is the free-form value being read, if any: where it starts
	// and how many members and elements it has shown so far.
	free      bool
	freeStart int64
	freeCount int
}

func (w *walker) add(p Problem) { w.problems = append(w.problems, p) }

// next reads a token; a syntax error is a Problem and false.
func (w *walker) next() (json.Token, bool) {
	tok, err := w.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		w.add(Problem{Kind: Syntax, Detail: strings.TrimPrefix(err.Error(), "json: "), Offset: syntaxOffset(w.data)})
		return nil, false
	}
	return tok, true
}

// end checks that nothing but white space follows the value.
func (w *walker) end() {
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		w.add(Problem{Kind: Trailing, Offset: syntaxOffset(w.data)})
	}
}

// syntaxOffset is where encoding/json's Unmarshal finds data's syntax error.
func syntaxOffset(data []byte) int64 {
	var raw json.RawMessage
	var syntax *json.SyntaxError
	if errors.As(json.Unmarshal(data, &raw), &syntax) {
		return syntax.Offset
	}
	return 0
}

// jsonType names a token's JSON type, as Problem.Got.
func jsonType(tok json.Token) string {
	switch t := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	}
	return "a value"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// value checks a value (tok is its first token) against s and reads the
// rest of it; false when the document turned out not to be JSON.
func (w *walker) value(path string, s *Shape, tok json.Token) bool {
	if w.values++; w.values > MaxValues {
		w.add(Problem{Kind: TooManyValues})
		return false
	}
	if w.free {
		if w.freeCount++; w.freeCount > MaxFreeMembers || w.dec.InputOffset()-w.freeStart > MaxFreeBytes {
			return false // the outermost free-form value reports it
		}
	} else if s != nil && s.FreeForm {
		return w.freeValue(path, s, tok)
	}
	if tok == nil {
		return true // null: absent, or refused by the caller
	}
	if s != nil && s.Type != Any && !w.scalarOK(path, s, tok) {
		s = nil // the wrong type: read what it is, any value
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return true
	}
	w.depth++
	switch {
	case w.depth > MaxDepth:
		w.add(Problem{Path: path, Kind: TooDeep})
		ok = w.skip()
	case d == '[':
		ok = w.elements(path, s)
	default:
		ok = w.members(path, s)
	}
	w.depth--
	return ok
}

// freeValue reads a free-form value (tok is its first token) within the
// bounds of MaxFreeMembers and MaxFreeBytes; beyond them the check stops
// there, with a problem naming the value.
func (w *walker) freeValue(path string, s *Shape, tok json.Token) bool {
	w.free, w.freeCount = true, 0
	w.freeStart = w.dec.InputOffset() - int64(tokenLen(tok))
	defer func() { w.free = false }()
	free := *s
	free.FreeForm = false
	w.freeCount-- // the value itself is not one of its members
	w.values--    // counted again below
	ok := w.value(path, &free, tok)
	if w.freeCount > MaxFreeMembers || w.dec.InputOffset()-w.freeStart > MaxFreeBytes {
		w.add(Problem{Path: path, Kind: FreeTooLarge})
		return false
	}
	return ok
}

// tokenLen is at least 1 for a token just read: where its value began is
// within a byte of the offset after a delimiter (scalars are short next to
// the bounds).
func tokenLen(tok json.Token) int {
	if _, ok := tok.(json.Delim); ok {
		return 1
	}
	return 0
}

// scalarOK checks tok's JSON type (and a number's value) against s.
func (w *walker) scalarOK(path string, s *Shape, tok json.Token) bool {
	var ok bool
	switch s.Type {
	case Object, Map:
		ok = tok == json.Delim('{')
	case Array:
		ok = tok == json.Delim('[')
	case String:
		_, ok = tok.(string)
	case StringOrNumber:
		switch tok.(type) {
		case string, json.Number:
			ok = true
		}
	case Bool:
		_, ok = tok.(bool)
	case Number, Integer:
		n, isNum := tok.(json.Number)
		if !isNum {
			break
		}
		if k := checkNumber(string(n), s); k != 0 {
			w.add(Problem{Path: path, Kind: k})
		}
		return true
	}
	if !ok {
		w.add(Problem{Path: path, Kind: WrongType, Want: s.want(), Got: jsonType(tok)})
	}
	return ok
}

// checkNumber returns the kind of problem of a JSON number of shape s, or 0.
func checkNumber(lit string, s *Shape) Kind {
	bits := s.Bits
	if bits == 0 {
		bits = 64
	}
	if s.Type == Number {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && math.IsInf(f, 0) || bits == 32 && math.Abs(f) > math.MaxFloat32 {
			return OutOfRange
		}
		return 0
	}
	return checkInt(lit, bits, !s.Unsigned)
}

// checkInt returns the kind of problem of a JSON number in an integer of
// bits, or 0. Integers may be written 1e3 or -0.
func checkInt(lit string, bits int, signed bool) Kind {
	if !strings.ContainsAny(lit, ".eE") {
		var err error
		switch {
		case lit == "-0":
		case signed:
			_, err = strconv.ParseInt(lit, 10, bits)
		default:
			_, err = strconv.ParseUint(lit, 10, bits)
		}
		if err != nil {
			return OutOfRange
		}
		return 0
	}
	// Exponent or fraction: the value must still be a whole number in range
	// (bounds are powers of two, exact as float64).
	lo, hiEx := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1)
	if !signed {
		lo, hiEx = 0, math.Ldexp(1, bits)
	}
	f, err := strconv.ParseFloat(lit, 64)
	switch {
	case err != nil && math.IsInf(f, 0):
		return OutOfRange
	case f != math.Trunc(f):
		return NotWhole
	case f < lo || f >= hiEx:
		return OutOfRange
	}
	return 0
}

// elements reads an array's elements (after '[') and its ']'.
func (w *walker) elements(path string, s *Shape) bool {
	var elem *Shape
	nullOK := true
	if s != nil {
		elem, nullOK = s.Elem, s.ElemNull
	}
	for i := 0; w.dec.More(); i++ {
		tok, ok := w.next()
		if !ok {
			return false
		}
		p := path + "[" + strconv.Itoa(i) + "]"
		if tok == nil && !nullOK && elem != nil && elem.Type != Any {
			w.add(Problem{Path: p, Kind: Null, Want: elem.want(), Got: "null"})
		}
		if !w.value(p, elem, tok) {
			return false
		}
	}
	_, ok := w.next()
	return ok
}

// members reads an object's members (after '{') and its '}': each key
// once, each value of the shape s gives it.
func (w *walker) members(path string, s *Shape) bool {
	var seen map[string]bool
	var fields map[int]bool
	for w.dec.More() {
		kt, ok := w.next()
		if !ok {
			return false
		}
		key := kt.(string)
		p := join(path, key)
		dup := seen[key]
		switch {
		case dup:
			w.add(Problem{Path: p, Kind: Duplicate})
		case seen == nil:
			seen = map[string]bool{key: true}
		default:
			seen[key] = true
		}
		sub, nullOK, field := s.member(key)
		if field != 0 && !dup {
			if fields[field] {
				w.add(Problem{Path: p, Kind: DuplicateField})
			} else if fields == nil {
				fields = map[int]bool{field: true}
			} else {
				fields[field] = true
			}
		}
		tok, ok := w.next()
		if !ok {
			return false
		}
		if tok == nil && !nullOK && sub != nil && sub.Type != Any {
			w.add(Problem{Path: p, Kind: Null, Want: sub.want(), Got: "null"})
		}
		if !w.value(p, sub, tok) {
			return false
		}
	}
	_, ok := w.next()
	return ok
}

// member returns what an object of shape s wants of its member key,
// whether it may be null, and its field number.
func (s *Shape) member(key string) (sub *Shape, nullOK bool, field int) {
	switch {
	case s == nil || s.Type == Any:
		return nil, true, 0
	case s.Type == Map:
		return s.Elem, s.ElemNull, 0
	case s.Member == nil:
		return nil, true, 0
	}
	sub, field = s.Member(key)
	return sub, true, field
}

// skip reads the rest of a value nested too deeply to check (its first
// token read), without recursion.
func (w *walker) skip() bool {
	for depth := 1; depth > 0; {
		tok, ok := w.next()
		if !ok {
			return false
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
	return true
}
