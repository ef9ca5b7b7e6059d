package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	portalv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/portal/v1"
	"github.com/gatehouse/gatehouse/pkg/gateway"
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
// The gRPC API stays typed; this only changes how REST JSON becomes the
// same messages.

// BodyError lists the problems of a request body, one sentence each.
type BodyError struct{ Problems []string }

// bodyErrorPrefix marks the facade's status message of a BodyError, which
// grpc-gateway turns into a status error carrying only the text.
const bodyErrorPrefix = "request body rejected:\n"

func (e *BodyError) Error() string { return bodyErrorPrefix + strings.Join(e.Problems, "\n") }

// RequestError is the facade's answer to a request it could not read: 422
// with the body's problems, or 400 for anything else (a query string it
// cannot parse, say).
func RequestError(_ *http.Request, err error) (int, []string) {
	msg := status.Convert(err).Message()
	if list, ok := strings.CutPrefix(msg, bodyErrorPrefix); ok {
		return http.StatusUnprocessableEntity, strings.Split(list, "\n")
	}
	return http.StatusBadRequest, []string{"Invalid request: " + msg}
}

// Marshaler is the REST facade's marshaler: responses as compact protojson
// (PascalCase names, every field present, integers as numbers since the
// API has no 64-bit ones), requests through DecodeBody.
type Marshaler struct{ gateway.CompactJSON }

// NewMarshaler returns the portal's REST marshaler.
func NewMarshaler() *Marshaler {
	return &Marshaler{gateway.CompactJSON{JSONPb: &runtime.JSONPb{MarshalOptions: MarshalOptions}}}
}

// MarshalOptions are how responses are written.
var MarshalOptions = protojson.MarshalOptions{EmitUnpopulated: true}

// Unmarshal reads a request body into v.
func (m *Marshaler) Unmarshal(data []byte, v any) error { return DecodeBody(data, v) }

// NewDecoder reads the whole body (already capped at 16 MiB by the facade) and decodes it.
func (m *Marshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return DecodeBody(data, v)
	})
}

var protoMessage = reflect.TypeFor[proto.Message]()

// DecodeBody reads a JSON request body into v: a proto message, or a
// pointer to a message pointer (which is allocated). A body that is not a
// JSON object, a wrong type or a misspelt field name is a *BodyError that
// lists those problems and the field checks' findings; v may then be partly
// set. Values of the right type are left to the handler to check.
func DecodeBody(data []byte, v any) error {
	msg, ok := v.(proto.Message)
	if !ok {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Pointer || !rv.Elem().Type().Implements(protoMessage) {
			return fmt.Errorf("portal body decoder: cannot decode into %T", v)
		}
		if rv.Elem().IsNil() {
			rv.Elem().Set(reflect.New(rv.Elem().Type().Elem()))
		}
		msg = rv.Elem().Interface().(proto.Message)
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

// decodeObject sets msg's fields from a JSON object keyed by their JSON
// names; null means absent. It returns one sentence per problem, in field
// order, then the misspelt names in key order.
func decodeObject(data []byte, msg protoreflect.Message) []string {
	if len(bytes.TrimSpace(data)) == 0 {
		return []string{"Request body is empty: send a JSON object"}
	}
	if !utf8.Valid(data) {
		return []string{"Request body is not valid UTF-8"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return []string{fmt.Sprintf("Request body is not valid JSON (error at byte %d)", syntax.Offset)}
		}
		return []string{"Request body must be a JSON object"}
	}
	if obj == nil {
		return []string{"Request body must be a JSON object"}
	}
	if err := gateway.CheckOneValue(data); err != nil { // duplicate keys, depth
		return []string{"Invalid request body: " + err.Error()}
	}
	var problems []string
	fields := msg.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		raw, ok := obj[fd.JSONName()]
		if !ok || isNull(raw) {
			continue
		}
		if p := setField(msg, fd, raw); p != "" {
			problems = append(problems, p)
		}
	}
	return append(problems, misspelled(obj, fields)...)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// setField decodes one member; it returns the problem, if any.
func setField(msg protoreflect.Message, fd protoreflect.FieldDescriptor, raw json.RawMessage) string {
	name := fd.JSONName()
	switch {
	case fd.Kind() == protoreflect.StringKind && !fd.IsList():
		var s string
		if !isString(raw) || json.Unmarshal(raw, &s) != nil {
			return name + " must be a string"
		}
		msg.Set(fd, protoreflect.ValueOfString(s))
	case fd.Kind() == protoreflect.BoolKind && !fd.IsList():
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return name + " must be true or false"
		}
		msg.Set(fd, protoreflect.ValueOfBool(b))
	case fd.Message() != nil && fd.Message().FullName() == idListName:
		ids, ok := stringArray(raw)
		if !ok {
			return name + " must be an array of IDs written as strings, such as [\"1\", \"2\"]"
		}
		msg.Set(fd, protoreflect.ValueOfMessage((&portalv1.IdList{Ids: ids}).ProtoReflect()))
	default:
		return name + " cannot be set"
	}
	return ""
}

var idListName = (&portalv1.IdList{}).ProtoReflect().Descriptor().FullName()

func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

// stringArray reads a JSON array whose elements are all strings.
func stringArray(raw json.RawMessage) ([]string, bool) {
	var elems []json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' || json.Unmarshal(raw, &elems) != nil {
		return nil, false
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		var s string
		if !isString(e) || json.Unmarshal(e, &s) != nil {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
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

// decodeOrder reads a page order, a JSON array of page IDs: numbers as the
// Tyk portal writes them, or strings of digits as this API writes IDs
// elsewhere. Whether each is a page of the product is the handler's to check.
func decodeOrder(data []byte, order *portalv1.DocOrder) []string {
	const want = "send a JSON array of tutorial page IDs, such as [3, 1, 2]"
	if len(bytes.TrimSpace(data)) == 0 {
		return []string{"Request body is empty: " + want}
	}
	if !utf8.Valid(data) {
		return []string{"Request body is not valid UTF-8"}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return []string{fmt.Sprintf("Request body is not valid JSON (error at byte %d)", syntax.Offset)}
		}
		return []string{"Request body must be a JSON array: " + want}
	}
	if elems == nil {
		return []string{"Request body must be a JSON array: " + want}
	}
	var problems []string
	for i, e := range elems {
		e = bytes.TrimSpace(e)
		var s string
		switch {
		case isString(e) && json.Unmarshal(e, &s) == nil:
			order.DocIds = append(order.DocIds, s)
		case len(e) > 0 && (e[0] == '-' || ('0' <= e[0] && e[0] <= '9')):
			order.DocIds = append(order.DocIds, string(e)) // the handler refuses 1.5, -1, 1e3
		default:
			problems = append(problems, fmt.Sprintf("Item %d must be a tutorial page ID (a positive integer); got %s", i+1, quote(string(e))))
		}
	}
	return problems
}
