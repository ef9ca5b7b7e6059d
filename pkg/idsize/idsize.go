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
// It reads the fields m holds in the order of its descriptor (the order of
// Range) without a closure, and names a field only to refuse it or walk
// into it: a request without ids costs no allocation.
func check(m protoreflect.Message, prefix string) (string, bool) {
	d := m.Descriptor()
	if strings.HasPrefix(string(d.FullName()), "google.protobuf.") {
		return "", true
	}
	fields := d.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() || !m.Has(fd) {
			continue
		}
		switch {
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			inner := prefix + string(fd.Name()) + "."
			if !fd.IsList() {
				if bad, ok := check(m.Get(fd).Message(), inner); !ok {
					return bad, false
				}
				continue
			}
			l := m.Get(fd).List()
			for j := 0; j < l.Len(); j++ {
				if bad, ok := check(l.Get(j).Message(), inner); !ok {
					return bad, false
				}
			}
		case fd.Kind() != protoreflect.StringKind || !IsID(string(fd.Name())):
		case fd.IsList():
			l := m.Get(fd).List()
			for j := 0; j < l.Len(); j++ {
				if len(l.Get(j).String()) > Max {
					return prefix + string(fd.Name()), false
				}
			}
		case len(m.Get(fd).String()) > Max:
			return prefix + string(fd.Name()), false
		}
	}
	return "", true
}
