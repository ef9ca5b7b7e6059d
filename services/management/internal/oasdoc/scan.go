package oasdoc

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// errUnsupported means the fast decoder met something it does not mirror
// exactly (a null, a boolean schema, an unknown key, an unusual number...):
// the value at hand is then decoded by kin-openapi itself.
var errUnsupported = errors.New("oasdoc: left to kin-openapi")

// scanner walks JSON text one value at a time, without building anything
// it is not asked for. It is strict where it reads a value itself (object
// and array structure, strings, numbers, literals); the raw values it hands
// to encoding/json are checked there.
type scanner struct {
	data []byte
	pos  int
	// canonical is set below Paths and Responses: kin-openapi decodes what
	// lies there from generic values encoded again (sorted keys, numbers
	// as float64 writes them), so a value handed to encoding/json is
	// encoded the same way first.
	canonical bool
	keys      [][]byte // see fields
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next significant byte (0 at the end).
func (s *scanner) peek() byte {
	s.space()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return errUnsupported
	}
	s.pos++
	return nil
}

// object reads an object, calling member with each key (valid only during
// the call) while the scanner stands on its value, which member consumes.
func (s *scanner) object(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return errUnsupported
		}
	}
}

// fields reads an object that stands for a struct, as object does, and
// leaves the object to kin-openapi when a key comes twice (encoding/json
// would merge the values).
func (s *scanner) fields(member func(key []byte) error) error {
	// The keys seen so far, of this object and of those it is nested in,
	// share one stack.
	base := len(s.keys)
	defer func() { s.keys = s.keys[:base] }()
	return s.object(func(key []byte) error {
		for _, k := range s.keys[base:] {
			if string(k) == string(key) {
				return errUnsupported
			}
		}
		s.keys = append(s.keys, key)
		return member(key)
	})
}

// array reads an array, calling element while the scanner stands on each
// element, which element consumes.
func (s *scanner) array(element func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := element(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return errUnsupported
		}
	}
}

// str reads a string. The bytes returned alias the document when it holds
// no escape; they are only valid until the next read.
func (s *scanner) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errUnsupported
	}
	start := s.pos + 1
	ascii := true
	for i := start; i < len(s.data); i++ {
		switch c := s.data[i]; {
		case c == '"':
			s.pos = i + 1
			if b := s.data[start:i]; ascii || utf8.Valid(b) {
				return b, nil
			}
			return s.decodeString(start-1, i+1) // encoding/json replaces invalid UTF-8
		case c == '\\':
			end, err := rawjson.SkipString(s.data, start-1)
			if err != nil {
				return nil, errUnsupported
			}
			s.pos = end
			return s.decodeString(start-1, end)
		case c < 0x20:
			return nil, errUnsupported
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, errUnsupported
}

func (s *scanner) decodeString(start, end int) ([]byte, error) {
	var v string
	if err := json.Unmarshal(s.data[start:end], &v); err != nil {
		return nil, errUnsupported
	}
	return []byte(v), nil
}

func (s *scanner) string() (string, error) {
	b, err := s.str()
	return string(b), err
}

// stringList reads an array of strings.
func (s *scanner) stringList() ([]string, error) {
	out := []string{}
	err := s.array(func() error {
		v, err := s.string()
		out = append(out, v)
		return err
	})
	return out, err
}

func (s *scanner) boolean() (bool, error) {
	s.space()
	rest := s.data[s.pos:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.pos += 4
		return true, s.literalEnd()
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.pos += 5
		return false, s.literalEnd()
	}
	return false, errUnsupported
}

// literalEnd checks that a number or literal is not run on into more text.
func (s *scanner) literalEnd() error {
	if s.pos < len(s.data) && !rawjson.EndsScalar(s.data[s.pos]) {
		return errUnsupported
	}
	return nil
}

// number reads a number as JSON spells it: a scanner of JSON's number
// grammar (sign, integer, fraction, exponent) in one pass over the bytes,
// each part a test of the next byte (cyclomatic complexity over 15 on
// purpose).
func (s *scanner) number() ([]byte, error) {
	s.space()
	b, start := s.data, s.pos
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return nil, errUnsupported
	}
	if i < len(b) && b[i] == '.' {
		if j := digits(b, i+1); j > i+1 {
			i = j
		} else {
			return nil, errUnsupported
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return nil, errUnsupported
		}
		i = j
	}
	s.pos = i
	return b[start:i], s.literalEnd()
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func (s *scanner) float() (float64, error) {
	tok, err := s.number()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return 0, errUnsupported
	}
	return f, nil
}

// maxExact is 2^53: below it an integer reads the same as a float64 and as
// a uint64, so whether kin-openapi re-encoded it first does not matter.
const maxExact = 1 << 53

// count reads a non-negative integer written plainly (no sign, fraction or
// exponent) below 2^53; anything else is left to kin-openapi.
func (s *scanner) count() (uint64, error) {
	tok, err := s.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(string(tok), 10, 64)
	if err != nil || n >= maxExact {
		return 0, errUnsupported
	}
	return n, nil
}

// skip passes over the next value and returns its text. It finds the end
// of valid JSON; what it returns is checked by whoever decodes it.
func (s *scanner) skip() ([]byte, error) {
	s.space()
	start := s.pos
	end, err := rawjson.SkipValue(s.data, start)
	if err != nil {
		return nil, errUnsupported
	}
	s.pos = end
	return s.data[start:end], nil
}

// generic decodes the next value as encoding/json does into an any.
func (s *scanner) generic() (any, error) {
	raw, err := s.skip()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}
