package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/pkg/restfacade"
)

// The REST facade reads request bodies with DecodeBody instead of protojson,
// for three reasons:
//
//   - one message per problem: protojson stops at the first wrong type, the
//     contract wants every wrong-typed field named (and, with them, every
//     field-level problem such as a bad Status);
//   - exact names: protojson also accepts the proto field names (`title`,
//     `markdown_enabled`), so `{"title":"x"}` would silently set Title while
//     `{"markdownEnabled":true}` would silently be dropped. Here only the
//     PascalCase names of the specification count, and a key that differs
//     from one of them only in case, `_` or `-` is refused with 422 naming
//     the right spelling, so a client's mistake is never silent. Other
//     unknown keys are ignored (CONTRACT §0);
//   - the ID lists: Categories and Tags travel as plain arrays of strings,
//     held by an IdList message so that gRPC can tell absent from empty.
//
// The body is checked by pkg/jsonstrict, as every service's are, against
// the shape these rules give; its problems are then worded as the portal's
// 422 sentences. The gRPC API stays typed; this only changes how REST JSON
// becomes the same messages.

// BodyError lists the problems of a request body, one sentence each. The
// facade hands it to RequestError as the decoder returned it.
type BodyError struct{ Problems []string }

func (e *BodyError) Error() string { return strings.Join(e.Problems, "; ") }

// RequestError is the facade's answer to a request it could not read: 422
// with the body's problems, or 400 for anything else (a query string it
// cannot parse, say).
func RequestError(_ *http.Request, err error) (int, []string) {
	var be *BodyError
	if errors.As(err, &be) {
		return http.StatusUnprocessableEntity, be.Problems
	}
	return http.StatusBadRequest, []string{"Invalid request: " + status.Convert(err).Message()}
}

// Marshaler is the REST facade's marshaler: responses as compact protojson
// (PascalCase names, every field present, integers as numbers since the
// API has no 64-bit ones), requests through DecodeBody.
type Marshaler struct{ restfacade.CompactJSON }

// NewMarshaler returns the portal's REST marshaler.
func NewMarshaler() *Marshaler {
	return &Marshaler{restfacade.CompactJSON{JSONPb: &runtime.JSONPb{MarshalOptions: MarshalOptions}}}
}

// MarshalOptions are how responses are written.
var MarshalOptions = protojson.MarshalOptions{EmitUnpopulated: true}

// Unmarshal reads a request body into v.
func (m *Marshaler) Unmarshal(data []byte, v any) error { return DecodeBody(data, v) }

// NewDecoder reads the whole body (already capped at 16 MiB by the facade) and decodes it.
func (m *Marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return restfacade.BodyDecoder(r, DecodeBody)
}

// DecodeBody reads a JSON request body into v: a proto message, or a
// pointer to a message pointer (which is allocated). A body that is not a
// JSON object, a wrong type or a misspelt field name is a *BodyError that
// lists those problems and the field checks' findings; v may then be partly
// set. Values of the right type are left to the handler to check.
func DecodeBody(data []byte, v any) error {
	msg, err := restfacade.Target(v)
	if err != nil {
		return fmt.Errorf("portal body decoder: %w", err)
	}
	var problems []string
	if order, ok := msg.(*portalv1.DocOrder); ok {
		problems = decodeOrder(data, order)
	} else {
		problems = decodeObject(data, msg.ProtoReflect())
	}
	if len(problems) == 0 {
		return nil // the handler checks the values, with the store at hand
	}
	// The request stops here: name the problems of the fields that did
	// decode too, so that the client sees them all at once.
	return &BodyError{Problems: append(problems, fieldProblems(msg)...)}
}

// fieldProblems runs the field checks of the message's handler.
func fieldProblems(msg proto.Message) []string {
	switch m := msg.(type) {
	case *portalv1.TutorialPageInput:
		return pageFieldProblems(m)
	case *portalv1.ProductInput:
		return productFieldProblems(m)
	case *portalv1.TagInput:
		return labelFieldProblems(m.GetName())
	case *portalv1.CategoryInput:
		return labelFieldProblems(m.GetName())
	}
	return nil
}

// documentProblem words a problem of the body as a whole, if it has one:
// empty, not UTF-8, not JSON, or (notShape) not the JSON type the route
// reads.
func documentProblem(problems []jsonstrict.Problem, empty, notShape string) string {
	for _, p := range problems {
		switch p.Kind {
		case jsonstrict.Empty:
			return "Request body is empty: " + empty
		case jsonstrict.InvalidUTF8:
			return "Request body is not valid UTF-8"
		case jsonstrict.Syntax, jsonstrict.Trailing:
			return fmt.Sprintf("Request body is not valid JSON (error at byte %d)", p.Offset)
		}
	}
	for _, p := range problems {
		if p.Path == "" && (p.Kind == jsonstrict.WrongType || p.Kind == jsonstrict.Null) {
			return notShape
		}
	}
	return ""
}

func problemsOf(err error) []jsonstrict.Problem {
	var e *jsonstrict.Error
	if errors.As(err, &e) {
		return e.Problems
	}
	return nil
}

// inputShapes holds each input message's jsonstrict shape: its fields by
// their exact JSON names, an IdList as an array of strings.
var inputShapes sync.Map // protoreflect.FullName → *jsonstrict.Shape

func inputShape(md protoreflect.MessageDescriptor) *jsonstrict.Shape {
	if s, ok := inputShapes.Load(md.FullName()); ok {
		return s.(*jsonstrict.Shape)
	}
	fields := md.Fields()
	s := &jsonstrict.Shape{Type: jsonstrict.Object, Member: func(key string) (*jsonstrict.Shape, int) {
		fd := fields.ByJSONName(key)
		if fd == nil || fd.JSONName() != key {
			return nil, 0
		}
		switch {
		case fd.Kind() == protoreflect.StringKind && !fd.IsList():
			return stringShape, int(fd.Number())
		case fd.Kind() == protoreflect.BoolKind && !fd.IsList():
			return boolShape, int(fd.Number())
		case fd.Message() != nil && (fd.Message().FullName() == idListName || fd.Message().FullName() == policyListName):
			return idListShape, int(fd.Number())
		}
		return nil, int(fd.Number()) // refused below: it cannot be set
	}}
	actual, _ := inputShapes.LoadOrStore(md.FullName(), s)
	return actual.(*jsonstrict.Shape)
}

var (
	stringShape = &jsonstrict.Shape{Type: jsonstrict.String}
	boolShape   = &jsonstrict.Shape{Type: jsonstrict.Bool}
	idListShape = &jsonstrict.Shape{Type: jsonstrict.Array, Elem: stringShape}
	idListName  = (&portalv1.IdList{}).ProtoReflect().Descriptor().FullName()
	// policyListName is a list of management policy ids: strings like an IdList's
	policyListName = (&portalv1.PolicyIdList{}).ProtoReflect().Descriptor().FullName()
)

// decodeObject sets msg's fields from a JSON object keyed by their JSON
// names; null means absent. It returns one sentence per problem, in field
// order, then the misspelled names in key order.
func decodeObject(data []byte, msg protoreflect.Message) []string {
	problems := problemsOf(jsonstrict.Check(data, inputShape(msg.Descriptor())))
	if p := documentProblem(problems, "send a JSON object", "Request body must be a JSON object"); p != "" {
		return []string{p}
	}
	for _, p := range problems {
		if p.Kind == jsonstrict.Duplicate || p.Kind == jsonstrict.TooDeep {
			return []string{"Invalid request body: " + p.Error()}
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return []string{"Request body must be a JSON object"} // not reached: checked above
	}
	var out []string
	fields := msg.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		raw, ok := obj[fd.JSONName()]
		switch {
		case hasProblem(problems, fd.JSONName()):
			out = append(out, fieldTypeProblem(fd))
		case !ok || string(bytes.TrimSpace(raw)) == "null":
		case !setField(msg, fd, raw):
			out = append(out, fd.JSONName()+" cannot be set")
		}
	}
	return append(out, misspelled(obj, fields)...)
}

// hasProblem reports whether a problem lies in the member name.
func hasProblem(problems []jsonstrict.Problem, name string) bool {
	for _, p := range problems {
		if rest, ok := strings.CutPrefix(p.Path, name); ok && (rest == "" || rest[0] == '[' || rest[0] == '.') {
			return true
		}
	}
	return false
}

// fieldTypeProblem is the sentence for a member of the wrong JSON type.
func fieldTypeProblem(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return fd.JSONName() + " must be a string"
	case protoreflect.BoolKind:
		return fd.JSONName() + " must be true or false"
	}
	if fd.Message() != nil && fd.Message().FullName() == policyListName {
		return fd.JSONName() + " must be an array of management policy ids (strings)"
	}
	return fd.JSONName() + " must be an array of IDs written as strings, such as [\"1\", \"2\"]"
}

// setField sets a checked member; false for a field the REST API cannot set.
func setField(msg protoreflect.Message, fd protoreflect.FieldDescriptor, raw json.RawMessage) bool {
	switch {
	case fd.Message() != nil && fd.Message().FullName() == idListName:
		ids := []string{}
		if json.Unmarshal(raw, &ids) != nil {
			return false
		}
		msg.Set(fd, protoreflect.ValueOfMessage((&portalv1.IdList{Ids: ids}).ProtoReflect()))
	case fd.Message() != nil && fd.Message().FullName() == policyListName:
		ids := []string{}
		if json.Unmarshal(raw, &ids) != nil {
			return false
		}
		msg.Set(fd, protoreflect.ValueOfMessage((&portalv1.PolicyIdList{Ids: ids}).ProtoReflect()))
	case fd.IsList():
		return false
	case fd.Kind() == protoreflect.StringKind:
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return false
		}
		msg.Set(fd, protoreflect.ValueOfString(v))
	case fd.Kind() == protoreflect.BoolKind:
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			return false
		}
		msg.Set(fd, protoreflect.ValueOfBool(v))
	default:
		return false
	}
	return true
}

// misspelled reports the keys that are a field's name in another spelling
// (case, `_`, `-`), in key order.
func misspelled(obj map[string]json.RawMessage, fields protoreflect.FieldDescriptors) []string {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if fields.ByJSONName(k) != nil {
			continue
		}
		for i := range fields.Len() {
			if want := fields.Get(i).JSONName(); fold(k) == fold(want) {
				problems = append(problems, fmt.Sprintf("Unknown field %s: field names are case-sensitive; did you mean %q?", quote(k), want))
				break
			}
		}
	}
	return problems
}

// fold reduces a name to what spellings of it share: lower case, no `_` or `-`.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return toLower(r)
	}, s)
}

func toLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// orderShape is a page order's: an array of IDs, strings or numbers.
var orderShape = &jsonstrict.Shape{Type: jsonstrict.Array, Elem: &jsonstrict.Shape{Type: jsonstrict.StringOrNumber}}

// decodeOrder reads a page order, a JSON array of page IDs: numbers as the
// Tyk portal writes them, or strings of digits as this API writes IDs
// elsewhere. Whether each is a page of the product is the handler's to check.
func decodeOrder(data []byte, order *portalv1.DocOrder) []string {
	const want = "send a JSON array of tutorial page IDs, such as [3, 1, 2]"
	problems := problemsOf(jsonstrict.Check(data, orderShape))
	if p := documentProblem(problems, want, "Request body must be a JSON array: "+want); p != "" {
		return []string{p}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return []string{"Request body must be a JSON array: " + want} // not reached: checked above
	}
	var out []string
	for i, e := range elems {
		e = bytes.TrimSpace(e)
		var s string
		switch {
		case hasProblem(problems, "["+strconv.Itoa(i)+"]"):
			out = append(out, fmt.Sprintf("Item %d must be a tutorial page ID (a positive integer); got %s", i+1, quote(string(e))))
		case json.Unmarshal(e, &s) == nil:
			order.DocIds = append(order.DocIds, s)
		default:
			order.DocIds = append(order.DocIds, string(e)) // a number: the handler refuses 1.5, -1, 1e3
		}
	}
	return out
}
