package oasimport

import (
	"maps"
	"slices"
	"strings"
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
func importMiddleware(root, x map[string]any, p Params) {
	middleware := child(x, "middleware")
	operations, _ := middleware["operations"].(map[string]any)
	if operations == nil {
		operations = map[string]any{}
	}
	current := map[string]bool{}
	paths, _ := root["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		item, _ := paths[path].(map[string]any)
		params, _ := item["parameters"].([]any)
		for _, method := range methods {
			op, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			if id == "" {
				id = strings.TrimPrefix(path, "/") + strings.ToUpper(method)
				op["operationId"] = id
			}
			current[id] = true
			tykOp, _ := operations[id].(map[string]any)
			if tykOp == nil {
				tykOp = map[string]any{}
			}
			importOperation(root, op, tykOp, len(params) > 0, p)
			if len(tykOp) == 0 {
				delete(operations, id)
			} else {
				operations[id] = tykOp
			}
		}
	}
	for id := range operations {
		if !current[id] {
			delete(operations, id)
		}
	}
	if len(operations) == 0 {
		delete(middleware, "operations")
	} else {
		middleware["operations"] = operations
	}
	if len(middleware) == 0 {
		delete(x, "middleware")
	}
}

// importOperation is Tyk's Operation.Import: allowList sets allow on every
// operation (and turns an enabled block off when true); validateRequest
// is set where the operation has parameters or a JSON request body, or its
// path item has parameters, with error code 422; mockResponse where a
// response documents an example or a schema, from the OAS examples.
func importOperation(root, op, tykOp map[string]any, pathHasParams bool, p Params) {
	if p.AllowList != nil {
		child(tykOp, "allow")["enabled"] = *p.AllowList
		if block, ok := tykOp["block"].(map[string]any); ok && block["enabled"] == true && *p.AllowList {
			block["enabled"] = false
		}
	}
	if p.ValidateRequest != nil && (validatable(root, op) || pathHasParams) {
		v := child(tykOp, "validateRequest")
		v["enabled"], v["errorResponseCode"] = *p.ValidateRequest, 422
	}
	if p.MockResponse != nil && mockable(root, op) {
		m := child(tykOp, "mockResponse")
		m["enabled"], m["fromOASExamples"] = *p.MockResponse, map[string]any{"enabled": *p.MockResponse}
	}
}

// validatable: the operation has parameters or a request body with a JSON
// media type (application/json, application/*, */*).
func validatable(root, op map[string]any) bool {
	if params, _ := op["parameters"].([]any); len(params) > 0 {
		return true
	}
	body := resolve(root, op["requestBody"])
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
func mockable(root, op map[string]any) bool {
	responses, _ := op["responses"].(map[string]any)
	for _, r := range responses {
		content, _ := resolve(root, r)["content"].(map[string]any)
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
func importAuthentication(root, x map[string]any, enable bool) error {
	security, _ := root["security"].([]any)
	if len(security) == 0 {
		return refuse("%s", errNoSecurity)
	}
	auth := child(child(x, "server"), "authentication")
	auth["enabled"] = enable
	schemes := child(auth, "securitySchemes")
	components, _ := root["components"].(map[string]any)
	defined, _ := components["securitySchemes"].(map[string]any)
	kinds := map[string]string{}
	for _, req := range security {
		names, _ := req.(map[string]any)
		for _, name := range sortedKeys(names) {
			if kinds[name] != "" {
				continue
			}
			s := resolve(root, defined[name])
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

// resolve is v as an object, following local references
// (#/components/<kind>/<name>) a few levels deep; nil when it is none.
func resolve(root map[string]any, v any) map[string]any {
	for range 8 {
		o, _ := v.(map[string]any)
		ref, _ := o["$ref"].(string)
		if ref == "" {
			return o
		}
		v = root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := v.(map[string]any)
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			v = m[part]
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
