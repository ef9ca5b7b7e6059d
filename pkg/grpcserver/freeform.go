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
	type total struct{ bytes, members int }
	var totals map[protowire.Number]*total
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
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
			totals = map[protowire.Number]*total{}
		}
		t := totals[num]
		if t == nil {
			t = &total{}
			totals[num] = t
		}
		t.bytes += len(v)
		if fd.IsMap() || fd.IsList() {
			t.members++ // one entry or element
		}
		if !fd.IsMap() {
			t.members += members(v, freeKind(fd.Message()), jsonstrict.MaxFreeMembers+1-t.members)
		}
		if t.bytes > jsonstrict.MaxFreeBytes || t.members > jsonstrict.MaxFreeMembers {
			return rest.Error(codes.InvalidArgument, 400, (&jsonstrict.Problem{Path: p, Kind: jsonstrict.FreeTooLarge}).Error())
		}
	}
	return nil
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
	for len(b) > 0 && count < budget {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return count
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return count
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return count
		}
		b = b[n:]
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
