package convert

import (
	"cmp"
	"slices"
)

// The document skeleton: the OpenAPI part (openapi, info, paths, components, security) and the root of the
// x-tyk-api-gateway extension. Field order is the output key order: alphabetical at the root (as Tyk writes
// it), the order of Tyk's structs inside the extension. Maps are written with sorted keys.

// openAPIVersion is the OpenAPI version Tyk's migration writes.
const openAPIVersion = "3.0.6"

// oasDocument is a Tyk OAS API definition.
type oasDocument struct {
	Components *components           `json:"components,omitempty"`
	Info       oasInfo               `json:"info"`
	OpenAPI    string                `json:"openapi"`
	Paths      map[string]*pathItem  `json:"paths"`
	Security   []map[string][]string `json:"security,omitempty"`
	XTyk       xTykAPIGateway        `json:"x-tyk-api-gateway"`
}

// oasInfo is the OpenAPI info object; Tyk sets only title and version.
type oasInfo struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

type components struct {
	SecuritySchemes map[string]*securityScheme `json:"securitySchemes,omitempty"`
}

// xTykAPIGateway is the x-tyk-api-gateway extension.
type xTykAPIGateway struct {
	Info       xInfo        `json:"info"`
	Upstream   xUpstream    `json:"upstream"`
	Server     xServer      `json:"server"`
	Middleware *xMiddleware `json:"middleware,omitempty"`
	// ErrorOverrides is the classic error_overrides (erroroverrides.go).
	ErrorOverrides *xErrorOverrides `json:"errorOverrides,omitempty"`
}

// xMiddleware holds the global and the per-operation middleware.
type xMiddleware struct {
	Global     *xGlobal               `json:"global,omitempty"`
	Operations map[string]*xOperation `json:"operations,omitempty"`
}

// xEnabled is every extension object that only has an enabled flag.
type xEnabled struct {
	Enabled bool `json:"enabled"`
}

// xHeader is a header name and value.
type xHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// buildDocument builds the whole document of one target, part by part.
func (c *converter) buildDocument(t *target) *oasDocument {
	d := &oasDocument{
		Info:    oasInfo{Title: t.name, Version: t.versionName},
		OpenAPI: openAPIVersion,
		Paths:   map[string]*pathItem{},
	}
	d.XTyk.Info = c.info(t)
	d.XTyk.Upstream = c.upstream(t)
	d.XTyk.Server = c.server(t)
	c.security(d)
	mw := &xMiddleware{Global: c.global(t)}
	mw.Operations = c.operations(t, d)
	if mw.Global != nil || len(mw.Operations) > 0 {
		d.XTyk.Middleware = mw
	}
	d.XTyk.ErrorOverrides = c.errorOverrides()
	return d
}

// sortedKeys returns the keys of m in ascending order.
func sortedKeys[M ~map[K]V, K cmp.Ordered, V any](m M) []K {
	if len(m) == 0 {
		return nil
	}
	keys := make([]K, 0, len(m)) // one allocation, where collecting the keys grows a slice step by step
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// headersOf turns a header map into a list sorted by name.
func headersOf(m map[string]string) []xHeader {
	if len(m) == 0 {
		return nil
	}
	out := make([]xHeader, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, xHeader{Name: k, Value: m[k]})
	}
	return out
}
