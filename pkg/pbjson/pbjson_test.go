package pbjson

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// testFile is a proto3 file with every kind pbjson writes and some it
// leaves to protojson:
//
//	enum Color { COLOR_UNSPECIFIED = 0; RED = 1; }
//	message Leaf { string s = 1; int32 i = 2; ... one field per scalar kind;
//	  optional string opt = 16; repeated string rs = 17; repeated int64 rl = 18;
//	  repeated Color rc = 19; repeated bytes rb = 20; }
//	message Top { Leaf leaf = 1; repeated Leaf leaves = 2;
//	  oneof choice { string cs = 3; Leaf cl = 4; } Top self = 5;
//	  string json_named = 6 [json_name = "otherName"]; }
//	message Floats { double d = 1; }
//	message WithMap { map<string, string> m = 1; }
//	message WithStruct { google.protobuf.Struct s = 1; }
func testFile(t testing.TB) protoreflect.FileDescriptor {
	t.Helper()
	s := proto.String
	field := func(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: s(name), Number: proto.Int32(n), Type: typ.Enum(), Label: label.Enum()}
		if typeName != "" {
			f.TypeName = s(typeName)
		}
		return f
	}
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL, descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	leaf := &descriptorpb.DescriptorProto{Name: s("Leaf")}
	for i, k := range []descriptorpb.FieldDescriptorProto_Type{
		descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_INT32,
		descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_UINT32,
		descriptorpb.FieldDescriptorProto_TYPE_UINT64, descriptorpb.FieldDescriptorProto_TYPE_SINT32,
		descriptorpb.FieldDescriptorProto_TYPE_SINT64, descriptorpb.FieldDescriptorProto_TYPE_FIXED32,
		descriptorpb.FieldDescriptorProto_TYPE_FIXED64, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32,
		descriptorpb.FieldDescriptorProto_TYPE_SFIXED64, descriptorpb.FieldDescriptorProto_TYPE_BOOL,
		descriptorpb.FieldDescriptorProto_TYPE_BYTES,
	} {
		leaf.Field = append(leaf.Field, field("f"+k.String(), int32(i+1), k, opt, ""))
	}
	leaf.Field = append(leaf.Field,
		field("color", 14, descriptorpb.FieldDescriptorProto_TYPE_ENUM, opt, ".t.Color"),
		field("opt", 16, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
		field("rs", 17, descriptorpb.FieldDescriptorProto_TYPE_STRING, rep, ""),
		field("rl", 18, descriptorpb.FieldDescriptorProto_TYPE_INT64, rep, ""),
		field("rc", 19, descriptorpb.FieldDescriptorProto_TYPE_ENUM, rep, ".t.Color"),
		field("rb", 20, descriptorpb.FieldDescriptorProto_TYPE_BYTES, rep, ""),
	)
	leaf.Field[14].Proto3Optional = proto.Bool(true)
	leaf.Field[14].OneofIndex = proto.Int32(0)
	leaf.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: s("_opt")}}
	top := &descriptorpb.DescriptorProto{Name: s("Top"), Field: []*descriptorpb.FieldDescriptorProto{
		field("leaf", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".t.Leaf"),
		field("leaves", 2, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".t.Leaf"),
		field("cs", 3, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
		field("cl", 4, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".t.Leaf"),
		field("self", 5, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".t.Top"),
		field("json_named", 6, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
	}, OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: s("choice")}}}
	top.Field[2].OneofIndex = proto.Int32(0)
	top.Field[3].OneofIndex = proto.Int32(0)
	top.Field[5].JsonName = s("otherName")
	floats := &descriptorpb.DescriptorProto{Name: s("Floats"), Field: []*descriptorpb.FieldDescriptorProto{
		field("d", 1, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, opt, "")}}
	entry := &descriptorpb.DescriptorProto{Name: s("MEntry"), Field: []*descriptorpb.FieldDescriptorProto{
		field("key", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
		field("value", 2, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
	}, Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}}
	withMap := &descriptorpb.DescriptorProto{Name: s("WithMap"), NestedType: []*descriptorpb.DescriptorProto{entry},
		Field: []*descriptorpb.FieldDescriptorProto{field("m", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".t.WithMap.MEntry")}}
	withStruct := &descriptorpb.DescriptorProto{Name: s("WithStruct"), Field: []*descriptorpb.FieldDescriptorProto{
		field("s", 1, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Struct")}}
	fdp := &descriptorpb.FileDescriptorProto{
		Name: s("t.proto"), Package: s("t"), Syntax: s("proto3"),
		Dependency:  []string{"google/protobuf/struct.proto"},
		EnumType:    []*descriptorpb.EnumDescriptorProto{{Name: s("Color"), Value: []*descriptorpb.EnumValueDescriptorProto{{Name: s("COLOR_UNSPECIFIED"), Number: proto.Int32(0)}, {Name: s("RED"), Number: proto.Int32(1)}}}},
		MessageType: []*descriptorpb.DescriptorProto{leaf, top, floats, withMap, withStruct},
	}
	_ = structpb.NullValue_NULL_VALUE // links struct.proto into GlobalFiles
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// texts are the strings the random messages hold: escapes of every kind,
// multi-byte runes, U+FFFD written validly, U+2028, HTML characters.
var texts = []string{"", "a", `q"uo\te`, "\x00\x01\x08\x09\x0a\x0c\x0d\x1f\x20\x7f", "é ü 日本", "\u2028\u2029", "\ufffd", "<a&b>", "x, y: z"}

// fill sets each field of m at random (or leaves it unset), messages up to
// depth deep.
func fill(r *rand.Rand, m protoreflect.Message, depth int) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if r.IntN(3) == 0 {
			continue
		}
		if fd.IsList() {
			l := m.Mutable(fd).List()
			for range r.IntN(4) {
				if fd.Kind() == protoreflect.MessageKind {
					if depth > 0 {
						e := l.NewElement()
						fill(r, e.Message(), depth-1)
						l.Append(e)
					}
					continue
				}
				l.Append(scalar(r, fd))
			}
			continue
		}
		if fd.Kind() == protoreflect.MessageKind {
			if depth > 0 {
				c := m.Mutable(fd).Message()
				fill(r, c, depth-1)
			}
			continue
		}
		m.Set(fd, scalar(r, fd))
	}
}

func scalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	ints := []int64{0, 1, -1, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
	n := ints[r.IntN(len(ints))]
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(texts[r.IntN(len(texts))])
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(texts[r.IntN(len(texts))]))
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(r.IntN(3))) // 2 is no known value
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(n))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(n)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(n))
	}
	panic(fd.Kind().String())
}

// options are the marshal options the services use, and the others pbjson
// covers.
var options = []protojson.MarshalOptions{
	{}, {EmitUnpopulated: true}, {EmitUnpopulated: true, UseProtoNames: true}, {UseEnumNumbers: true}, {UseProtoNames: true},
}

// want is protojson's output for m with o, compacted (protojson may put a
// space after a comma).
func want(t *testing.T, m proto.Message, o protojson.MarshalOptions) []byte {
	t.Helper()
	raw, err := o.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestMarshalAsProtojson: random messages of every covered kind are written
// byte for byte as protojson writes them, with each set of options.
func TestMarshalAsProtojson(t *testing.T) {
	fd := testFile(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range []protoreflect.Name{"Leaf", "Top"} {
		md := fd.Messages().ByName(name)
		for i := range 400 {
			m := dynamicpb.NewMessage(md)
			if i > 0 { // the first is empty
				fill(r, m, 3)
			}
			for _, o := range options {
				got, ok := Marshal(m, o)
				if w := want(t, m, o); !ok || !bytes.Equal(got, w) {
					t.Fatalf("%s with %+v: Marshal = %s (%v)\nprotojson writes %s", name, o, got, ok, w)
				}
			}
		}
	}
}

// TestNotCovered: what pbjson does not write it leaves to protojson.
func TestNotCovered(t *testing.T) {
	fd := testFile(t)
	for _, name := range []protoreflect.Name{"Floats", "WithMap", "WithStruct"} {
		if b, ok := Marshal(dynamicpb.NewMessage(fd.Messages().ByName(name)), protojson.MarshalOptions{}); ok {
			t.Errorf("%s written: %s", name, b)
		}
	}
	if b, ok := Marshal(&structpb.Value{}, protojson.MarshalOptions{}); ok {
		t.Errorf("a well-known type written: %s", b)
	}
	leaf := dynamicpb.NewMessage(fd.Messages().ByName("Leaf"))
	for _, o := range []protojson.MarshalOptions{{Multiline: true}, {Indent: " "}, {EmitDefaultValues: true}} {
		if b, ok := Marshal(leaf, o); ok {
			t.Errorf("with %+v: written %s", o, b)
		}
	}
	// invalid UTF-8: protojson refuses it, and so is it left to protojson
	top := dynamicpb.NewMessage(fd.Messages().ByName("Top"))
	inner := top.Mutable(top.Descriptor().Fields().ByName("leaves")).List()
	e := inner.NewElement()
	e.Message().Mutable(e.Message().Descriptor().Fields().ByName("rs")).List().Append(protoreflect.ValueOfString("bad \xff"))
	inner.Append(e)
	if b, ok := Marshal(top, protojson.MarshalOptions{}); ok {
		t.Errorf("invalid UTF-8 written: %s", b)
	}
	if _, err := protojson.Marshal(top); err == nil {
		t.Error("protojson writes invalid UTF-8: the case above tests nothing")
	}
}

// BenchmarkMarshal compares pbjson with protojson on a list of 16 small
// messages (the shape of management's category counts).
func BenchmarkMarshal(b *testing.B) {
	fd := testFile(b)
	top := dynamicpb.NewMessage(fd.Messages().ByName("Top"))
	l := top.Mutable(top.Descriptor().Fields().ByName("leaves")).List()
	for i := range 16 {
		e := l.NewElement()
		e.Message().Set(e.Message().Descriptor().Fields().ByName("fTYPE_STRING"), protoreflect.ValueOfString("team"+string(rune('a'+i))))
		e.Message().Set(e.Message().Descriptor().Fields().ByName("fTYPE_INT32"), protoreflect.ValueOfInt32(64))
		l.Append(e)
	}
	o := protojson.MarshalOptions{EmitUnpopulated: true}
	b.Run("pbjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := Marshal(top, o); !ok {
				b.Fatal("not covered")
			}
		}
	})
	b.Run("protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := o.Marshal(top); err != nil {
				b.Fatal(err)
			}
		}
	})
}
