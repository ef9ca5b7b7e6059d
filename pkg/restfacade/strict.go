package restfacade

import (
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
)

// A request body is read in two passes. The strict pass (pkg/jsonstrict)
// walks the JSON tokens against the target message's fields and refuses
// what the REST contract does not allow but protojson would take: trailing
// data after the value, numbers written as strings ("10", "1e3", "NaN"),
// fractions or out-of-range numbers in integer fields, duplicate keys,
// nesting deeper than jsonstrict.MaxDepth, invalid UTF-8. Only then does
// protojson decode the body. The error names the field (CONTRACT §0), so a
// client sees which member of its body is wrong: the first problem found,
// a *jsonstrict.Problem.

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
// with DecodeJSON (see BodyDecoder).
func (j JSON) NewDecoder(r io.Reader) runtime.Decoder { return BodyDecoder(r, DecodeJSON) }

var protoMessage = reflect.TypeFor[proto.Message]()

// DecodeJSON decodes data into v, a proto message or a pointer to a message
// pointer (allocated when nil), after CheckJSON. Unknown fields are ignored.
func DecodeJSON(data []byte, v any) error {
	msg, err := Target(v)
	if err != nil {
		return err
	}
	if err := CheckJSON(data, msg.ProtoReflect().Descriptor()); err != nil {
		return err
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, msg)
}

// Target is the message a decoder fills for v: v itself when it is a
// message, else the message a pointer to a message pointer points to
// (allocated when nil).
func Target(v any) (proto.Message, error) {
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
// need only be valid JSON). Null stands for an absent field. Its error is
// the first problem found, a *jsonstrict.Problem.
func CheckJSON(data []byte, md protoreflect.MessageDescriptor) error {
	if p := jsonstrict.First(jsonstrict.Check(data, MessageShape(md))); p != nil {
		return p
	}
	return nil
}

// shapes holds each message's jsonstrict.Shape, built once.
var (
	shapes   sync.Map // protoreflect.FullName → *jsonstrict.Shape
	building sync.Mutex
)

// MessageShape is the jsonstrict.Shape of md's JSON form, as protojson
// reads it: fields by JSON or proto name, the well-known types in their
// JSON forms.
func MessageShape(md protoreflect.MessageDescriptor) *jsonstrict.Shape {
	if s, ok := shapes.Load(md.FullName()); ok {
		return s.(*jsonstrict.Shape)
	}
	building.Lock()
	defer building.Unlock()
	built := map[protoreflect.FullName]*jsonstrict.Shape{}
	s := messageShape(md, built)
	for name, s := range built {
		shapes.LoadOrStore(name, s)
	}
	return s
}

// messageShape builds md's shape; built holds the ones begun, so that a
// message that contains itself ends.
func messageShape(md protoreflect.MessageDescriptor, built map[protoreflect.FullName]*jsonstrict.Shape) *jsonstrict.Shape {
	if s, ok := shapes.Load(md.FullName()); ok {
		return s.(*jsonstrict.Shape)
	}
	if s, ok := built[md.FullName()]; ok {
		return s
	}
	switch md.FullName() {
	// The free-form types are decoded into structures whatever they hold:
	// bounded (jsonstrict.MaxFreeMembers, MaxFreeBytes).
	case "google.protobuf.Value":
		return &jsonstrict.Shape{Type: jsonstrict.Any, FreeForm: true}
	case "google.protobuf.Struct":
		return &jsonstrict.Shape{Type: jsonstrict.Object, FreeForm: true}
	case "google.protobuf.ListValue":
		return &jsonstrict.Shape{Type: jsonstrict.Array, ElemNull: true, FreeForm: true}
	case "google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask":
		return &jsonstrict.Shape{Type: jsonstrict.String}
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
		"google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
		return scalarShape(md.Fields().ByNumber(1).Kind())
	}
	s := &jsonstrict.Shape{Type: jsonstrict.Object}
	built[md.FullName()] = s
	fields := md.Fields()
	byNumber := make(map[protoreflect.FieldNumber]*jsonstrict.Shape, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		byNumber[fd.Number()] = fieldShape(fd, built)
	}
	s.Member = func(key string) (*jsonstrict.Shape, int) {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil {
			return nil, 0
		}
		return byNumber[fd.Number()], int(fd.Number())
	}
	return s
}

// fieldShape is the shape of a field's value: a list, a map or one value.
func fieldShape(fd protoreflect.FieldDescriptor, built map[protoreflect.FullName]*jsonstrict.Shape) *jsonstrict.Shape {
	switch {
	case fd.IsList():
		isValue := fd.Message() != nil && fd.Message().FullName() == "google.protobuf.Value"
		return &jsonstrict.Shape{Type: jsonstrict.Array, Elem: singleShape(fd, built), ElemNull: isValue}
	case fd.IsMap():
		// a map is decoded into structures whatever it holds: free-form
		return &jsonstrict.Shape{Type: jsonstrict.Map, Elem: singleShape(fd.MapValue(), built), ElemNull: fd.MapValue().Message() != nil, FreeForm: true}
	}
	return singleShape(fd, built)
}

func singleShape(fd protoreflect.FieldDescriptor, built map[protoreflect.FullName]*jsonstrict.Shape) *jsonstrict.Shape {
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		return messageShape(fd.Message(), built)
	}
	return scalarShape(fd.Kind())
}

// scalarShape is the JSON form of a scalar kind: JSON's own type for each,
// never a number or boolean written as a string.
func scalarShape(k protoreflect.Kind) *jsonstrict.Shape {
	switch k {
	case protoreflect.BoolKind:
		return &jsonstrict.Shape{Type: jsonstrict.Bool}
	case protoreflect.StringKind, protoreflect.BytesKind:
		return &jsonstrict.Shape{Type: jsonstrict.String}
	case protoreflect.EnumKind:
		return &jsonstrict.Shape{Type: jsonstrict.StringOrNumber}
	case protoreflect.FloatKind:
		return &jsonstrict.Shape{Type: jsonstrict.Number, Bits: 32}
	case protoreflect.DoubleKind:
		return &jsonstrict.Shape{Type: jsonstrict.Number}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return &jsonstrict.Shape{Type: jsonstrict.Integer, Bits: 32}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return &jsonstrict.Shape{Type: jsonstrict.Integer, Bits: 32, Unsigned: true}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return &jsonstrict.Shape{Type: jsonstrict.Integer, Unsigned: true}
	}
	return &jsonstrict.Shape{Type: jsonstrict.Integer}
}
