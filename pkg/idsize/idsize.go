// Package idsize bounds identifiers (issue 32): an id a client sends — a
// path parameter, or a request field named id, <name>_id or <name>_ids — is
// at most Max bytes, checked before authorization work or audit, so that no
// caller can make the audit log (or anything else) store an id of a
// megabyte. The audit log also cuts what it stores to Max (Cut).
package idsize

import (
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gatehouse/gatehouse/pkg/rest"
)

// Max is the largest identifier, in bytes.
const Max = 256

// Error is the refusal of an identifier over Max: 400 (InvalidArgument)
// naming the field.
func Error(field string) error {
	return rest.Error(codes.InvalidArgument, http.StatusBadRequest, field+" must be at most "+strconv.Itoa(Max)+" bytes")
}

// Cut returns s cut to at most Max bytes (at a UTF-8 boundary when s is
// valid UTF-8).
func Cut(s string) string {
	if len(s) <= Max {
		return s
	}
	i := Max
	for i > 0 && i > Max-4 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}

// IsID tells whether a field name names an identifier.
func IsID(name string) bool {
	return name == "id" || strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids")
}

// Check returns the error of the first identifier field of msg (at any
// depth, outside google.protobuf's own messages such as Struct, which hold
// documents, not ids) over Max, or nil.
func Check(msg proto.Message) error {
	if msg == nil {
		return nil
	}
	if name, ok := check(msg.ProtoReflect(), ""); !ok {
		return Error(name)
	}
	return nil
}

// check walks m; it returns the dotted name of a field over Max and false.
func check(m protoreflect.Message, prefix string) (string, bool) {
	if strings.HasPrefix(string(m.Descriptor().FullName()), "google.protobuf.") {
		return "", true
	}
	bad, ok := "", true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := prefix + string(fd.Name())
		switch {
		case fd.IsMap():
			return true
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			if fd.IsList() {
				l := v.List()
				for i := 0; i < l.Len() && ok; i++ {
					bad, ok = check(l.Get(i).Message(), name+".")
				}
				return ok
			}
			bad, ok = check(v.Message(), name+".")
			return ok
		case fd.Kind() != protoreflect.StringKind || !IsID(string(fd.Name())):
			return true
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if len(l.Get(i).String()) > Max {
					bad, ok = name, false
					return false
				}
			}
		case len(v.String()) > Max:
			bad, ok = name, false
			return false
		}
		return true
	})
	return bad, ok
}
