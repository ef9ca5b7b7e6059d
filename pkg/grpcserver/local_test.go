package grpcserver

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestMoveInto: a reply of the answer's type gets the answer's fields
// (lists of messages, unknown bytes) as they are; one of another Go type
// for the same message gets an equal copy.
func TestMoveInto(t *testing.T) {
	answer := func() *structpb.ListValue {
		l := &structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("a"), structpb.NewNumberValue(2)}}
		l.ProtoReflect().SetUnknown([]byte{0x98, 0x06, 0x01}) // field 99, varint 1
		return l
	}
	src := answer()
	reply := new(structpb.ListValue)
	moveInto(reply, src)
	if !proto.Equal(reply, answer()) {
		t.Errorf("moved answer %v, want %v", reply, answer())
	}
	if len(reply.Values) != 2 || reply.Values[0] != src.Values[0] {
		t.Error("the answer's list was copied, want it moved")
	}
	dyn := dynamicpb.NewMessage(src.ProtoReflect().Descriptor())
	moveInto(dyn, answer())
	if !proto.Equal(dyn, answer()) {
		t.Errorf("answer into a dynamic message %v, want %v", dyn, answer())
	}
}
