package oasimport

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// The per-operation middleware and the authentication an import generates,
// as Tyk's ImportMiddlewares and importAuthentication do for the query
// parameters allowList, validateRequest, mockResponse and authentication.

// methods are the operations of a path item, in Tyk's order.
var methods = []string{"connect", "delete", "get", "head", "options", "patch", "post", "put", "trace"}

// importMiddleware walks every operation of the document: an operation
// without operationId is given Tyk's (the path without its leading slash,
// then the method in capitals: pets/{id}GET); the parameters set enable or
// disable allow, validateRequest and mockResponse on it; x-tyk-api-gateway
// operations left empty, or naming no operation of the document, are
// dropped, and so is a middleware section left empty.
func importMiddleware(root object, refs *resolver, x map[string]any, p Params) error {
	middleware := child(x, "middleware")
	existing := existingOperations(middleware["operations"])
	// the operations written, each encoded as soon as it is made: an
	// import of tens of thousands of operations holds their bytes, not a
	// tree of maps per operation
	ops := tykOperations{index: map[string]int{}}
	var err error
	item := func(path string, item map[string]any) {
		params, _ := item["parameters"].([]any)
		for _, method := range methods {
			op, ok := item[method].(map[string]any)
			if !ok || err != nil {
				continue
			}
			id, _ := op["operationId"].(string)
			if id == "" {
				id = strings.TrimPrefix(path, "/") + strings.ToUpper(method)
				op["operationId"] = id
			}
			tykOp := existing(id)
			if i, seen := ops.index[id]; seen {
				tykOp, _ = decodeValue(ops.list[i].raw).(map[string]any) // an operationId used twice
			}
			if tykOp == nil {
				tykOp = map[string]any{}
			}
			importOperation(refs, op, tykOp, len(params) > 0, p)
			err = ops.set(id, tykOp)
		}
	}
	switch paths := root["paths"].(type) {
	case map[string]any: // laid over a template
		for _, path := range sortedKeys(paths) {
			m, _ := paths[path].(map[string]any)
			item(path, m)
		}
	case json.RawMessage: // one path item decoded at a time
		if isObject(paths) {
			out, perr := eachPathItem(paths, item)
			if perr != nil {
				return perr
			}
			root["paths"] = out
		}
	}
	if err != nil {
		return err
	}
	if written := ops.encode(); written == nil {
		delete(middleware, "operations")
	} else {
		middleware["operations"] = written
	}
	if len(middleware) == 0 {
		delete(x, "middleware")
	}
	return nil
}

// existingOperations looks up the extension's operations by operationId:
// decoded, or raw (decodeExtension), then split once and each decoded
// when asked for.
func existingOperations(v any) func(id string) map[string]any {
	switch ops := v.(type) {
	case map[string]any:
		return func(id string) map[string]any {
			op, _ := ops[id].(map[string]any)
			return op
		}
	case json.RawMessage:
		if at, ok := placesOf(ops); ok {
			return func(id string) map[string]any {
				// i: after the last member named id (the last of a key twice, as a decode keeps it)
				i, _ := slices.BinarySearchFunc(at, id, func(p place, id string) int {
					if c := strings.Compare(string(ops[p.key:p.keyEnd]), id); c != 0 {
						return c
					}
					return -1
				})
				if i == 0 || string(ops[at[i-1].key:at[i-1].keyEnd]) != id {
					return nil
				}
				op, _ := decodeValue(ops[at[i-1].value:at[i-1].valueEnd]).(map[string]any)
				return op
			}
		}
		split, _ := members(ops)
		return func(id string) map[string]any {
			raw, ok := split[id]
			if !ok {
				return nil
			}
			op, _ := decodeValue(raw).(map[string]any)
			return op
		}
	}
	return func(string) map[string]any { return nil }
}

// place is where a member's key (without its quotes) and value lie in an
// object's text.
type place struct{ key, keyEnd, value, valueEnd int32 }

// placesOf are the members of a valid JSON object in its text, sorted by
// key (stably: of a key twice, the last is last); false when a key is
// written with an escape or is not valid UTF-8 (its text is not the key a
// decode reads) or the text is too long for the places. 16 bytes a member,
// where a map by key held ~65 for 10,000 operations.
func placesOf(obj []byte) ([]place, bool) {
	if len(obj) > math.MaxInt32 {
		return nil, false
	}
	var at []place
	err := rawjson.Each(obj, func(key, value []byte) error {
		k, v := cap(obj)-cap(key), cap(obj)-cap(value)
		if len(key) == 0 || k < 0 || k+len(key) > len(obj) || &obj[k] != &key[0] || !utf8.Valid(key) {
			return errNotObject
		}
		at = append(at, place{int32(k), int32(k + len(key)), int32(v), int32(v + len(value))})
		return nil
	})
	if err != nil {
		return nil, false
	}
	slices.SortStableFunc(at, func(a, b place) int {
		return bytes.Compare(obj[a.key:a.keyEnd], obj[b.key:b.keyEnd])
	})
	return at, true
}

// tykOperations are the extension's operations an import writes, by
// operationId, each encoded; an empty one is dropped.
type tykOperations struct {
	list  []encodedOperation
	index map[string]int
	// scratch is where each operation is written before it is copied
	scratch text
}

type encodedOperation struct {
	id  string
	raw []byte // nil: dropped
}

func (o *tykOperations) set(id string, tykOp map[string]any) error {
	var raw []byte
	if len(tykOp) > 0 {
		o.scratch.reset()
		if err := writeValue(&o.scratch, tykOp); err != nil {
			return err
		}
		raw = o.scratch.join()
	}
	if i, ok := o.index[id]; ok {
		o.list[i].raw = raw
		return nil
	}
	o.index[id] = len(o.list)
	o.list = append(o.list, encodedOperation{id, raw})
	return nil
}

// encode is the operations as one JSON object, ids sorted; nil when none
// is left.
func (o *tykOperations) encode() *text {
	slices.SortFunc(o.list, func(a, b encodedOperation) int {
		return strings.Compare(a.id, b.id)
	})
	var out text
	for _, op := range o.list {
		if op.raw == nil {
			continue
		}
		if len(out.blocks) == 0 {
			out.WriteByte('{')
		} else {
			out.WriteByte(',')
		}
		writeValue(&out, op.id)
		out.WriteByte(':')
		out.Write(op.raw)
	}
	if len(out.blocks) == 0 {
		return nil
	}
	out.WriteByte('}')
	return &out
}

// eachPathItem calls fn with every path item of raw paths in path order,
// decoded, and returns the paths as fn left them, written.
func eachPathItem(raw json.RawMessage, fn func(path string, item map[string]any)) (*text, error) {
	items, err := members(raw)
	if err != nil {
		return nil, err
	}
	var out text
	out.WriteByte('{')
	for i, path := range slices.Sorted(maps.Keys(items)) {
		if i > 0 {
			out.WriteByte(',')
		}
		v := decodeValue(items[path])
		delete(items, path)
		if m, ok := v.(map[string]any); ok {
			fn(path, m)
		}
		if err := writeValue(&out, path); err != nil {
			return nil, err
		}
		out.WriteByte(':')
		if err := writeValue(&out, v); err != nil {
			return nil, err
		}
	}
	out.WriteByte('}')
	return &out, nil
}

// importOperation is Tyk's Operation.Import: allowList sets allow on every
// operation (and turns an enabled block off when true); validateRequest
// is set where the operation has parameters or a JSON request body, or its
// path item has parameters, with error code 422; mockResponse where a
// response documents an example or a schema, from the OAS examples.
func importOperation(refs *resolver, op, tykOp map[string]any, pathHasParams bool, p Params) {
	if p.AllowList != nil {
		child(tykOp, "allow")["enabled"] = *p.AllowList
		if block, ok := tykOp["block"].(map[string]any); ok && block["enabled"] == true && *p.AllowList {
			block["enabled"] = false
		}
	}
	if p.ValidateRequest != nil && (validatable(refs, op) || pathHasParams) {
		v := child(tykOp, "validateRequest")
		v["enabled"], v["errorResponseCode"] = *p.ValidateRequest, 422
	}
	if p.MockResponse != nil && mockable(refs, op) {
		m := child(tykOp, "mockResponse")
		m["enabled"], m["fromOASExamples"] = *p.MockResponse, map[string]any{"enabled": *p.MockResponse}
	}
}

// validatable: the operation has parameters or a request body with a JSON
// media type (application/json, application/*, */*).
func validatable(refs *resolver, op map[string]any) bool {
	if params, _ := op["parameters"].([]any); len(params) > 0 {
		return true
	}
	body := refs.resolve(op["requestBody"])
	content, _ := body["content"].(map[string]any)
	for _, mime := range []string{"application/json", "application/*", "*/*"} {
		if _, ok := content[mime].(map[string]any); ok {
			return true
		}
	}
	return false
}

// mockable: a response of the operation has content with an example, a
// schema or examples.
func mockable(refs *resolver, op map[string]any) bool {
	responses, _ := op["responses"].(map[string]any)
	for _, r := range responses {
		content, _ := refs.resolve(r)["content"].(map[string]any)
		for _, m := range content {
			media, _ := m.(map[string]any)
			if media["example"] != nil || media["schema"] != nil {
				return true
			}
			if examples, _ := media["examples"].(map[string]any); len(examples) > 0 {
				return true
			}
		}
	}
	return false
}

// errNoSecurity is Tyk's answer for authentication without security.
const errNoSecurity = "The ‘security’ object is empty in your OAS. When enabling authentication, your OpenAPI description must include a ‘security’ object that defines the authentication schemes. You can either add a ‘security’ object or disable authentication in the API settings."

// importAuthentication is Tyk's importAuthentication: authentication is
// enabled (or disabled) and each security scheme the document's security
// requirements name is enabled (or disabled) in securitySchemes: apiKey as
// a token, http bearer with bearerFormat JWT as jwt, http basic as basic,
// oauth2 as oauth (the last three read the Authorization header); other
// kinds are left out. With two schemes or more, baseIdentityProvider is
// auth_token when one is a token, else jwt_claim when one is a JWT, else
// oauth_key.
func importAuthentication(root object, refs *resolver, x map[string]any, enable bool) error {
	security, _ := root.get("security").([]any)
	if len(security) == 0 {
		return refuse("%s", errNoSecurity)
	}
	auth := child(child(x, "server"), "authentication")
	auth["enabled"] = enable
	schemes := child(auth, "securitySchemes")
	defined, _ := refs.at([]string{"components", "securitySchemes"}).(map[string]any)
	kinds := map[string]string{}
	for _, req := range security {
		names, _ := req.(map[string]any)
		for _, name := range sortedKeys(names) {
			if kinds[name] != "" {
				continue
			}
			s := refs.resolve(defined[name])
			kind := schemeKind(s)
			if kind == "" {
				continue
			}
			kinds[name] = kind
			e := child(schemes, name)
			e["enabled"] = enable
			if kind != "token" {
				e["header"] = map[string]any{"enabled": true, "name": "Authorization"}
			}
		}
	}
	delete(auth, "baseIdentityProvider")
	if len(schemes) == 0 {
		delete(auth, "securitySchemes") // as Tyk's omitempty leaves it
	}
	if len(schemes) >= 2 {
		kinds := slices.Collect(maps.Values(kinds))
		switch {
		case slices.Contains(kinds, "token"):
			auth["baseIdentityProvider"] = "auth_token"
		case slices.Contains(kinds, "jwt"):
			auth["baseIdentityProvider"] = "jwt_claim"
		default:
			auth["baseIdentityProvider"] = "oauth_key"
		}
	}
	return nil
}

// schemeKind is how Tyk imports an OpenAPI security scheme: token, jwt,
// basic, oauth, or "" when it does not.
func schemeKind(s map[string]any) string {
	typ, _ := s["type"].(string)
	scheme, _ := s["scheme"].(string)
	format, _ := s["bearerFormat"].(string)
	switch {
	case typ == "apiKey":
		return "token"
	case typ == "http" && scheme == "bearer" && format == "JWT":
		return "jwt"
	case typ == "http" && scheme == "basic":
		return "basic"
	case typ == "oauth2":
		return "oauth"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
