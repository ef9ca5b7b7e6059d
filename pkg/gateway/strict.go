package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A request body is read in two passes. The strict pass below walks the
// JSON tokens against the target message's fields and refuses what the REST
// contract does not allow but protojson would take: trailing data after the
// value, numbers written as strings ("10", "1e3", "NaN"), fractions or
// out-of-range numbers in integer fields, duplicate keys, nesting deeper
// than MaxDepth, invalid UTF-8. Only then does protojson decode the body.
// The error names the field (CONTRACT §0), so a client sees which member
// of its body is wrong.

// MaxDepth is how deeply a request body's arrays and objects may nest.
const MaxDepth = 100

// ErrEmptyBody refuses an empty (or whitespace only) body where the route
// needs one.
var ErrEmptyBody = errors.New("the request body is empty")

// BodyError is a request body the facade refuses; Field is the JSON path of
// the member at fault ("data.attributes.max_length"), empty for the body as
// a whole.
type BodyError struct {
	Field   string
	Problem string
}

func (e *BodyError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// JSON is the facade's codec: compact protojson out, and in, exactly one
// strictly typed JSON value decoded by protojson.
type JSON struct{ CompactJSON }

// NewJSON returns the codec writing with o.
func NewJSON(o protojson.MarshalOptions) JSON {
	return JSON{CompactJSON{&runtime.JSONPb{MarshalOptions: o, UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true}}}}
}

// Unmarshal decodes data into v (see DecodeJSON).
func (j JSON) Unmarshal(data []byte, v any) error { return DecodeJSON(data, v) }

// NewDecoder reads the whole body (capped by the facade) and decodes it
// with DecodeJSON. An empty body is ErrEmptyBody, never io.EOF, which the
// generated handlers would take for "no body".
func (j JSON) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return DecodeJSON(data, v)
	})
}

var protoMessage = reflect.TypeFor[proto.Message]()

// DecodeJSON decodes data into v, a proto message or a pointer to a message
// pointer (allocated when nil), after CheckJSON. Unknown fields are ignored.
func DecodeJSON(data []byte, v any) error {
	msg, err := target(v)
	if err != nil {
		return err
	}
	if err := CheckJSON(data, msg.ProtoReflect().Descriptor()); err != nil {
		return err
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, msg)
}

func target(v any) (proto.Message, error) {
	if msg, ok := v.(proto.Message); ok {
		return msg, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Pointer || !rv.Elem().Type().Implements(protoMessage) {
		return nil, fmt.Errorf("gateway: cannot decode JSON into %T", v)
	}
	if rv.Elem().IsNil() {
		rv.Elem().Set(reflect.New(rv.Elem().Type().Elem()))
	}
	return rv.Elem().Interface().(proto.Message), nil
}

// CheckJSON reports whether data is exactly one JSON object whose members
// have the JSON types of md's fields (by JSON or proto name; unknown members
// need only be valid JSON). Null stands for an absent field.
func CheckJSON(data []byte, md protoreflect.MessageDescriptor) error {
	c, err := newChecker(data)
	if err != nil {
		return err
	}
	tok, err := c.next()
	if err != nil {
		return err
	}
	if tok == nil {
		return &BodyError{Problem: "the request body must be a JSON object, not null"}
	}
	if err := c.message("", md, tok); err != nil {
		return err
	}
	return c.end()
}

// CheckOneValue reports whether data is exactly one JSON value of any
// shape, with no duplicate keys and nesting no deeper than MaxDepth: the
// rules every body follows, typed or stored verbatim.
func CheckOneValue(data []byte) error {
	c, err := newChecker(data)
	if err != nil {
		return err
	}
	tok, err := c.next()
	if err != nil {
		return err
	}
	if err := c.anyValue("", tok); err != nil {
		return err
	}
	return c.end()
}

type checker struct {
	dec   *json.Decoder
	depth int
}

func newChecker(data []byte) (*checker, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ErrEmptyBody
	}
	if !utf8.Valid(data) {
		return nil, &BodyError{Problem: "the request body is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &checker{dec: dec}, nil
}

func (c *checker) next() (json.Token, error) {
	tok, err := c.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, &BodyError{Problem: "the request body is not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	return tok, nil
}

// end checks that nothing but white space follows the value.
func (c *checker) end() error {
	if _, err := c.dec.Token(); !errors.Is(err, io.EOF) {
		return &BodyError{Problem: "the request body is not valid JSON: data after the first JSON value"}
	}
	return nil
}

func (c *checker) enter(path string) error {
	c.depth++
	if c.depth > MaxDepth {
		return &BodyError{Field: path, Problem: fmt.Sprintf("nested more than %d levels deep", MaxDepth)}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonType names a token's JSON type for a message.
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

func mismatch(path, want string, tok json.Token) error {
	return &BodyError{Field: path, Problem: fmt.Sprintf("must be %s, not %s", want, jsonType(tok))}
}

// message checks an object (tok is its first token) against md.
func (c *checker) message(path string, md protoreflect.MessageDescriptor, tok json.Token) error {
	switch md.FullName() {
	case "google.protobuf.Value":
		return c.anyValue(path, tok)
	case "google.protobuf.Struct":
		if tok != json.Delim('{') {
			return mismatch(path, "an object", tok)
		}
		return c.anyValue(path, tok)
	case "google.protobuf.ListValue":
		if tok != json.Delim('[') {
			return mismatch(path, "an array", tok)
		}
		return c.anyValue(path, tok)
	case "google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask":
		if _, ok := tok.(string); !ok {
			return mismatch(path, "a string", tok)
		}
		return nil
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
		"google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
		return c.scalar(path, md.Fields().ByNumber(1), tok)
	}
	if tok != json.Delim('{') {
		return mismatch(path, "an object", tok)
	}
	if err := c.enter(path); err != nil {
		return err
	}
	fields := md.Fields()
	seen := map[string]bool{}
	setFields := map[protoreflect.FieldNumber]bool{}
	for c.dec.More() {
		kt, err := c.next()
		if err != nil {
			return err
		}
		key := kt.(string)
		p := join(path, key)
		if seen[key] {
			return &BodyError{Field: p, Problem: "duplicate key"}
		}
		seen[key] = true
		vt, err := c.next()
		if err != nil {
			return err
		}
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil {
			if err := c.anyValue(p, vt); err != nil {
				return err
			}
			continue
		}
		if setFields[fd.Number()] {
			return &BodyError{Field: p, Problem: "duplicate key (the field is named twice)"}
		}
		setFields[fd.Number()] = true
		if err := c.field(p, fd, vt); err != nil {
			return err
		}
	}
	if _, err := c.next(); err != nil { // '}'
		return err
	}
	c.depth--
	return nil
}

// field checks a member's value (tok is its first token); null is absent.
func (c *checker) field(path string, fd protoreflect.FieldDescriptor, tok json.Token) error {
	if tok == nil {
		return nil
	}
	switch {
	case fd.IsList():
		if tok != json.Delim('[') {
			return mismatch(path, "an array", tok)
		}
		if err := c.enter(path); err != nil {
			return err
		}
		for i := 0; c.dec.More(); i++ {
			et, err := c.next()
			if err != nil {
				return err
			}
			p := path + "[" + strconv.Itoa(i) + "]"
			if et == nil && fd.Message() == nil || et == nil && fd.Message().FullName() != "google.protobuf.Value" {
				return &BodyError{Field: p, Problem: "must not be null"}
			}
			if err := c.single(p, fd, et); err != nil {
				return err
			}
		}
		if _, err := c.next(); err != nil {
			return err
		}
		c.depth--
		return nil
	case fd.IsMap():
		if tok != json.Delim('{') {
			return mismatch(path, "an object", tok)
		}
		if err := c.enter(path); err != nil {
			return err
		}
		seen := map[string]bool{}
		for c.dec.More() {
			kt, err := c.next()
			if err != nil {
				return err
			}
			key := kt.(string)
			p := join(path, key)
			if seen[key] {
				return &BodyError{Field: p, Problem: "duplicate key"}
			}
			seen[key] = true
			vt, err := c.next()
			if err != nil {
				return err
			}
			if vt == nil && fd.MapValue().Message() == nil {
				return &BodyError{Field: p, Problem: "must not be null"}
			}
			if err := c.single(p, fd.MapValue(), vt); err != nil {
				return err
			}
		}
		if _, err := c.next(); err != nil {
			return err
		}
		c.depth--
		return nil
	}
	return c.single(path, fd, tok)
}

// single checks one value of fd's kind.
func (c *checker) single(path string, fd protoreflect.FieldDescriptor, tok json.Token) error {
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		if tok == nil {
			return nil
		}
		return c.message(path, fd.Message(), tok)
	}
	return c.scalar(path, fd, tok)
}

// scalar checks a value of a scalar field: JSON's own type for each kind,
// never a number or boolean written as a string.
func (c *checker) scalar(path string, fd protoreflect.FieldDescriptor, tok json.Token) error {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if _, ok := tok.(bool); !ok {
			return mismatch(path, "true or false", tok)
		}
	case protoreflect.StringKind, protoreflect.BytesKind:
		if _, ok := tok.(string); !ok {
			return mismatch(path, "a string", tok)
		}
	case protoreflect.EnumKind:
		switch tok.(type) {
		case string, json.Number:
		default:
			return mismatch(path, "a string", tok)
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		n, ok := tok.(json.Number)
		if !ok {
			return mismatch(path, "a number", tok)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil && math.IsInf(f, 0) || fd.Kind() == protoreflect.FloatKind && math.Abs(f) > math.MaxFloat32 {
			return &BodyError{Field: path, Problem: "number out of range"}
		}
	default: // the integer kinds
		n, ok := tok.(json.Number)
		if !ok {
			return mismatch(path, "a whole number", tok)
		}
		if p := checkInt(string(n), fd.Kind()); p != "" {
			return &BodyError{Field: path, Problem: p}
		}
	}
	return nil
}

// checkInt returns the problem of a JSON number in an integer field.
func checkInt(lit string, k protoreflect.Kind) string {
	bits, signed := 64, true
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		bits = 32
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		bits, signed = 32, false
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		signed = false
	}
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
			return "number out of range"
		}
		return ""
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
		return "number out of range"
	case f != math.Trunc(f):
		return "must be a whole number"
	case f < lo || f >= hiEx:
		return "number out of range"
	}
	return ""
}

// anyValue checks a value of any shape (tok is its first token): only the
// nesting depth and duplicate keys.
func (c *checker) anyValue(path string, tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if err := c.enter(path); err != nil {
		return err
	}
	if d == '[' {
		for i := 0; c.dec.More(); i++ {
			et, err := c.next()
			if err != nil {
				return err
			}
			if err := c.anyValue(path+"["+strconv.Itoa(i)+"]", et); err != nil {
				return err
			}
		}
	} else {
		seen := map[string]bool{}
		for c.dec.More() {
			kt, err := c.next()
			if err != nil {
				return err
			}
			key := kt.(string)
			p := join(path, key)
			if seen[key] {
				return &BodyError{Field: p, Problem: "duplicate key"}
			}
			seen[key] = true
			vt, err := c.next()
			if err != nil {
				return err
			}
			if err := c.anyValue(p, vt); err != nil {
				return err
			}
		}
	}
	if _, err := c.next(); err != nil {
		return err
	}
	c.depth--
	return nil
}
