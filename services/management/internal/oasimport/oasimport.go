// Package oasimport makes a Tyk OAS document from a plain OpenAPI 3.0
// document, as the Tyk Dashboard's import, dry-run and patch routes do: the
// x-tyk-api-gateway extension is generated, or completed when the document
// brings one, and the Dashboard's query parameters (upstreamURL,
// listenPath, customDomain, allowList, validateRequest, mockResponse,
// authentication) are applied as Tyk's BuildDefaultTykExtension applies
// them. The result is a JSON document for the
// caller to validate and store through the ordinary create and update
// paths; nothing here reads or writes the store.
package oasimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

const extension = "x-tyk-api-gateway"

// Params are the query parameters applied to the extension; empty (nil)
// ones change nothing.
type Params struct {
	UpstreamURL  string
	ListenPath   string
	CustomDomain string
	// AllowList, ValidateRequest and MockResponse enable (or disable) that
	// middleware on the operations it applies to; Authentication enables
	// (or disables) authentication with the schemes the document's
	// security names.
	AllowList, ValidateRequest, MockResponse, Authentication *bool
	// Template is the data of an API template (an asset of kind
	// oas-template): the document is laid over it before anything else.
	Template []byte
}

// Error is a refusal of the input; its text names what is wrong.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func refuse(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// Import returns doc with the extension an import gives it: the one doc
// brings, or a new one, with info.name from info.title when empty, the
// API active and external, the listen path stripped (/ when none is set),
// context variables and traffic logs on unless set, the upstream from the
// parameter, else the extension, else servers[0].url (its variables
// replaced by their defaults), and the parameters applied.
func Import(doc []byte, p Params) ([]byte, error) {
	return build(doc, nil, p, true)
}

// Patch returns doc, the new OpenAPI part of an API whose stored document
// is old, with old's extension unless doc brings its own, and the
// parameters applied.
func Patch(old, doc []byte, p Params) ([]byte, error) {
	stored, err := members(old) // slices of old, not a copy of it
	if err != nil {
		return nil, err
	}
	return build(doc, stored[extension], p, false)
}

func build(doc []byte, fallback json.RawMessage, p Params, isImport bool) ([]byte, error) {
	root, err := decodeRoot(doc)
	if err != nil {
		return nil, refuse("the document must be a JSON object")
	}
	if len(p.Template) > 0 {
		if root, err = applyTemplate(root, p.Template); err != nil {
			return nil, err
		}
	}
	_, present := root[extension]
	var x map[string]any
	ok := false
	switch v := root[extension].(type) {
	case json.RawMessage:
		x, ok = decodeExtension(v)
	case map[string]any:
		x, ok = v, v != nil
	}
	if present && !ok {
		return nil, refuse("%s: must be an object", extension)
	}
	if !ok && len(fallback) > 0 {
		if x, ok = decodeExtension(fallback); !ok {
			err = errNotObject
			return nil, errors.New("stored extension: " + err.Error())
		}
	}
	if x == nil {
		x = map[string]any{}
	}
	info := child(x, "info")
	if s, _ := info["name"].(string); s == "" {
		openapiInfo, _ := root.get("info").(map[string]any)
		title, _ := openapiInfo["title"].(string)
		info["name"] = title
	}
	server := child(x, "server")
	listen := child(server, "listenPath")
	if isImport {
		state := child(info, "state")
		state["active"], state["internal"] = true, false
		listen["strip"] = true
		global := child(child(x, "middleware"), "global")
		for _, name := range []string{"contextVariables", "trafficLogs"} {
			if _, set := global[name]; !set {
				global[name] = map[string]any{"enabled": true}
			}
		}
	}
	if p.ListenPath != "" {
		listen["value"] = p.ListenPath
	} else if s, _ := listen["value"].(string); s == "" {
		listen["value"] = "/"
	}
	if p.CustomDomain != "" {
		domain, set := server["customDomain"].(map[string]any)
		if !set {
			domain = map[string]any{"enabled": true}
			server["customDomain"] = domain
		}
		domain["name"] = p.CustomDomain
	}
	upstream := child(x, "upstream")
	switch have, _ := upstream["url"].(string); {
	case p.UpstreamURL != "":
		if !absolute(p.UpstreamURL) {
			return nil, refuse("upstreamURL: %q is not an absolute URL", p.UpstreamURL)
		}
		upstream["url"] = p.UpstreamURL
	case have == "":
		u, err := serverURL(root)
		if err != nil {
			return nil, err
		}
		upstream["url"] = u
	}
	refs := newResolver(root)
	if p.Authentication != nil {
		if err := importAuthentication(root, refs, x, *p.Authentication); err != nil {
			return nil, err
		}
	}
	if err := importMiddleware(root, refs, x, p); err != nil {
		return nil, err
	}
	root[extension] = x
	return encodeObject(root)
}

// serverURL is servers[0].url with its variables replaced by their
// defaults; it must be absolute.
func serverURL(root object) (string, error) {
	servers, _ := root.get("servers").([]any)
	if len(servers) == 0 {
		return "", refuse("servers: empty; give the upstream with the upstreamURL parameter or a server URL")
	}
	first, _ := servers[0].(map[string]any)
	u, _ := first["url"].(string)
	vars, _ := first["variables"].(map[string]any)
	for name, v := range vars {
		variable, _ := v.(map[string]any)
		def, _ := variable["default"].(string)
		u = strings.ReplaceAll(u, "{"+name+"}", def)
	}
	if !absolute(u) {
		return "", refuse("servers[0].url: %q is not an absolute URL; give the upstream with the upstreamURL parameter", u)
	}
	return u, nil
}

func absolute(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && u.Host != ""
}

// child returns the object member name of o, made (and set) when absent
// or not an object.
func child(o map[string]any, name string) map[string]any {
	c, ok := o[name].(map[string]any)
	if !ok {
		c = map[string]any{}
		o[name] = c
	}
	return c
}

// decodeExtension decodes an x-tyk-api-gateway object but its
// middleware.operations, left raw for importMiddleware to decode one
// operation at a time (a stored extension of 50,000 operations decoded
// whole held ~20 times the request body on PATCH); false when it is not
// an object.
func decodeExtension(raw json.RawMessage) (map[string]any, bool) {
	ms, err := members(raw)
	if err != nil {
		return nil, false
	}
	x := make(map[string]any, len(ms))
	for k, v := range ms {
		if k != "middleware" || !isObject(v) {
			x[k] = decodeValue(v)
			continue
		}
		mws, _ := members(v)
		mw := make(map[string]any, len(mws))
		for k, v := range mws {
			if k == "operations" && isObject(v) {
				mw[k] = v
			} else {
				mw[k] = decodeValue(v)
			}
		}
		x[k] = mw
	}
	return x, true
}

func decodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // numbers kept as written
	var o map[string]any
	if err := d.Decode(&o); err != nil {
		return nil, err
	}
	if o == nil {
		return nil, errors.New("not an object")
	}
	return o, nil
}
