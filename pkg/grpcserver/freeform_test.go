package grpcserver

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestCheckFree: a free-form field (here a Value's struct_value) holds at
// most 1,000 members and elements in all, at any depth, and 64 KiB; over
// either, the refusal names the field, before anything is decoded.
func TestCheckFree(t *testing.T) {
	members := func(n int, nested bool) *structpb.Value {
		s := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		for i := range n {
			v := structpb.NewNullValue()
			if nested {
				v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewBoolValue(true)}})
			}
			s.Fields[fmt.Sprint("k", i)] = v
		}
		return structpb.NewStructValue(s)
	}
	for _, c := range []struct {
		name string
		msg  *structpb.Value
		want bool // refused
	}{
		{"1,000 members", members(1000, false), false},
		{"1,001 members", members(1001, false), true},
		{"500 members of one element each", members(500, true), false},
		{"501 members of one element each", members(501, true), true},
		{"a string of 64 KiB", structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"s": structpb.NewStringValue(strings.Repeat("x", 64<<10-16))}}), false},
		{"a string over 64 KiB", structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"s": structpb.NewStringValue(strings.Repeat("x", 64<<10))}}), true},
	} {
		b, err := proto.Marshal(c.msg)
		if err != nil {
			t.Fatal(err)
		}
		err = checkFree(b, c.msg.ProtoReflect().Descriptor(), "")
		switch {
		case c.want && (err == nil || !strings.HasPrefix(err.Error(), "rpc error: code = InvalidArgument desc = structValue: too large")):
			t.Errorf("%s: %v, want InvalidArgument naming structValue", c.name, err)
		case !c.want && err != nil:
			t.Errorf("%s: %v, want it accepted", c.name, err)
		}
	}
}
