package grpcserver

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/pkg/rest"
)

// The free-form fields of a request — google.protobuf.Struct, ListValue and
// Value, and maps — are decoded into structures whatever they hold. As on
// REST (jsonstrict.Shape.FreeForm), each holds at most
// jsonstrict.MaxFreeMembers members and elements in all and
// jsonstrict.MaxFreeBytes: checkFree walks a message's wire form, guided by
// its descriptor, before anything is decoded, and names the first field
// over either bound with its JSON path.

// checkFree returns the refusal of the first free-form field of b (the
// wire form of md) over the bounds, or nil. Malformed data is left to the
// decoder.
func checkFree(b []byte, md protoreflect.MessageDescriptor, path string) error {
	var totals map[protowire.Number]*freeTotal
	for {
		num, v, after, ok := nextBytes(b)
		if !ok {
			return nil
		}
		b = after
		fd := md.Fields().ByNumber(num)
		if fd == nil || (fd.Message() == nil && !fd.IsMap()) {
			continue
		}
		p := fd.JSONName()
		if path != "" {
			p = path + "." + p
		}
		if !fd.IsMap() && freeKind(fd.Message()) == 0 {
			if err := checkFree(v, fd.Message(), p); err != nil {
				return err
			}
			continue
		}
		if totals == nil {
			totals = map[protowire.Number]*freeTotal{}
		}
		t := totals[num]
		if t == nil {
			t = &freeTotal{}
			totals[num] = t
		}
		if t.add(fd, v) {
			return rest.Error(codes.InvalidArgument, 400, (&jsonstrict.Problem{Path: p, Kind: jsonstrict.FreeTooLarge}).Error())
		}
	}
}

// freeTotal is what one free-form field holds so far: its bytes, and its
// members and elements at any depth.
type freeTotal struct{ bytes, members int }

// add counts v, the wire form of one value of fd (an entry of a map, an
// element of a list), and reports whether the field is over the bounds.
func (t *freeTotal) add(fd protoreflect.FieldDescriptor, v []byte) (over bool) {
	t.bytes += len(v)
	if fd.IsMap() || fd.IsList() {
		t.members++ // one entry or element
	}
	if !fd.IsMap() {
		t.members += members(v, freeKind(fd.Message()), jsonstrict.MaxFreeMembers+1-t.members)
	}
	return t.bytes > jsonstrict.MaxFreeBytes || t.members > jsonstrict.MaxFreeMembers
}

// nextBytes reads b up to its next field of the bytes wire type and returns
// that field's number and value, and the rest of b; ok is false at the end
// of b or on malformed data (left to the decoder).
func nextBytes(b []byte) (num protowire.Number, v, rest []byte, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, nil, nil, false
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return 0, nil, nil, false
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, nil, nil, false
		}
		return num, v, b[n:], true
	}
	return 0, nil, nil, false
}

// The free-form message types.
const (
	freeStruct = iota + 1
	freeList
	freeValue
)

func freeKind(md protoreflect.MessageDescriptor) int {
	switch md.FullName() {
	case "google.protobuf.Struct":
		return freeStruct
	case "google.protobuf.ListValue":
		return freeList
	case "google.protobuf.Value":
		return freeValue
	}
	return 0
}

// members counts the members and elements in the wire form b of a
// free-form message of kind, at any depth, stopping once it reaches
// budget.
func members(b []byte, kind, budget int) int {
	count := 0
	for count < budget {
		num, v, after, ok := nextBytes(b)
		if !ok {
			return count
		}
		b = after
		switch {
		case kind == freeStruct && num == 1: // fields: an entry {1: key, 2: Value}
			count++
			count += entryValueMembers(v, budget-count)
		case kind == freeList && num == 1: // values
			count++
			count += members(v, freeValue, budget-count)
		case kind == freeValue && num == 5: // struct_value
			count += members(v, freeStruct, budget-count)
		case kind == freeValue && num == 6: // list_value
			count += members(v, freeList, budget-count)
		}
	}
	return count
}

// entryValueMembers counts the members of a Struct entry's Value.
func entryValueMembers(entry []byte, budget int) int {
	for len(entry) > 0 {
		num, typ, n := protowire.ConsumeTag(entry)
		if n < 0 {
			return 0
		}
		entry = entry[n:]
		n = protowire.ConsumeFieldValue(num, typ, entry)
		if n < 0 {
			return 0
		}
		if num == 2 && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(entry)
			return members(v, freeValue, budget)
		}
		entry = entry[n:]
	}
	return 0
}
