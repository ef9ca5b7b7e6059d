package convert

import (
	"fmt"
	"net/http"
	"reflect"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Paths and operations: every classic endpoint entry (extended_paths of the target's version) becomes an
// OpenAPI operation, identified by Tyk's operationId rule (the raw classic path without its leading slash,
// followed by the method: "/orders/[0-9]+" GET → "orders/[0-9]+GET"), and its settings become that
// operation's entry in x-tyk-api-gateway.middleware.operations.

// pathItem is an OpenAPI path item; fields are in alphabetical order, as Tyk writes them.
type pathItem struct {
	Delete     *operation  `json:"delete,omitempty"`
	Get        *operation  `json:"get,omitempty"`
	Head       *operation  `json:"head,omitempty"`
	Options    *operation  `json:"options,omitempty"`
	Parameters []parameter `json:"parameters,omitempty"`
	Patch      *operation  `json:"patch,omitempty"`
	Post       *operation  `json:"post,omitempty"`
	Put        *operation  `json:"put,omitempty"`
	Trace      *operation  `json:"trace,omitempty"`
}

// operation returns the slot of a method (one of httpMethods).
func (p *pathItem) operation(method string) **operation {
	switch method {
	case "GET":
		return &p.Get
	case "PUT":
		return &p.Put
	case "POST":
		return &p.Post
	case "DELETE":
		return &p.Delete
	case "OPTIONS":
		return &p.Options
	case "HEAD":
		return &p.Head
	case "PATCH":
		return &p.Patch
	case "TRACE":
		return &p.Trace
	}
	panic("convert: unsupported method " + method) // endpoint() admits only httpMethods
}

type operation struct {
	OperationID string       `json:"operationId"`
	RequestBody *requestBody `json:"requestBody,omitempty"`
	Responses   responses    `json:"responses"`

	x         *opState  // its middleware while the document is built; nil until a setting is merged
	bodySetBy string    // the classic path whose validate_json set RequestBody
	keys      [1]string // the first response key, without an allocation of its own
}

// responses are the response keys of an operation ("default" or status codes), in the order encoding a map
// gives (sorted), each with an empty description: {"200":{"description":""}}. A sorted slice costs one small
// allocation where a map cost a table per operation.
type responses []string

// set adds a key, keeping the order.
func (r *responses) set(key string) {
	i, found := slices.BinarySearch(*r, key)
	if !found {
		*r = slices.Insert(*r, i, key)
	}
}

// remove drops a key.
func (r *responses) remove(key string) {
	if i, found := slices.BinarySearch(*r, key); found {
		*r = slices.Delete(*r, i, i+1)
	}
}

// defaultResponse is the responses of most operations, written once.
var defaultResponse = []byte(`{"default":{"description":""}}`)

// MarshalJSON writes the keys as an object of empty-description responses.
func (r responses) MarshalJSON() ([]byte, error) {
	if len(r) == 1 && r[0] == "default" {
		return defaultResponse, nil // the encoder copies it
	}
	out := make([]byte, 0, 2+len(r)*32)
	out = append(out, '{')
	for i, k := range r {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k)
		out = append(out, `:{"description":""}`...)
	}
	return append(out, '}'), nil
}

type requestBody struct {
	Content map[string]mediaType `json:"content"`
}

type mediaType struct {
	Schema map[string]any `json:"schema"`
}

type parameter struct {
	In       string      `json:"in"`
	Name     string      `json:"name"`
	Required bool        `json:"required"`
	Schema   paramSchema `json:"schema"`
	regex    string      // the classic segment's regular expression, if it had one
}

type paramSchema struct {
	Pattern string `json:"pattern,omitempty"`
	Type    string `json:"type"`
}

// xOperation is the middleware of one operation.
type xOperation struct {
	Allow                    *xAllowance        `json:"allow,omitempty"`
	Block                    *xAllowance        `json:"block,omitempty"`
	IgnoreAuthentication     *xAllowance        `json:"ignoreAuthentication,omitempty"`
	Internal                 *xEnabled          `json:"internal,omitempty"`
	TransformRequestMethod   *xTransformMethod  `json:"transformRequestMethod,omitempty"`
	TransformRequestBody     *xTransformBody    `json:"transformRequestBody,omitempty"`
	TransformResponseBody    *xTransformBody    `json:"transformResponseBody,omitempty"`
	TransformRequestHeaders  *xTransformHeaders `json:"transformRequestHeaders,omitempty"`
	TransformResponseHeaders *xTransformHeaders `json:"transformResponseHeaders,omitempty"`
	URLRewrite               *xURLRewrite       `json:"urlRewrite,omitempty"`
	Cache                    *xCachePlugin      `json:"cache,omitempty"`
	EnforceTimeout           *xEnforceTimeout   `json:"enforceTimeout,omitempty"`
	ValidateRequest          *xValidateRequest  `json:"validateRequest,omitempty"`
	MockResponse             *xMockResponse     `json:"mockResponse,omitempty"`
	VirtualEndpoint          *xVirtualEndpoint  `json:"virtualEndpoint,omitempty"`
	PostPlugins              []xEndpointPlugin  `json:"postPlugins,omitempty"`
	CircuitBreaker           *xCircuitBreaker   `json:"circuitBreaker,omitempty"`
	TrackEndpoint            *xEnabled          `json:"trackEndpoint,omitempty"`
	DoNotTrackEndpoint       *xEnabled          `json:"doNotTrackEndpoint,omitempty"`
	RequestSizeLimit         *xRequestSizeLimit `json:"requestSizeLimit,omitempty"`
	RateLimit                *xRateLimit        `json:"rateLimit,omitempty"`
}

type xAllowance struct {
	Enabled    bool `json:"enabled"`
	IgnoreCase bool `json:"ignoreCase,omitempty"`
}

type xTransformMethod struct {
	Enabled  bool   `json:"enabled"`
	ToMethod string `json:"toMethod"`
}

type xTransformBody struct {
	Enabled bool    `json:"enabled"`
	Format  string  `json:"format"`
	Path    *string `json:"path,omitempty"`
	Body    *string `json:"body,omitempty"`
}

type xURLRewrite struct {
	Enabled   bool                 `json:"enabled"`
	Pattern   string               `json:"pattern"`
	RewriteTo string               `json:"rewriteTo"`
	Triggers  []xURLRewriteTrigger `json:"triggers,omitempty"`
}

type xURLRewriteTrigger struct {
	Condition string            `json:"condition"`
	Rules     []xURLRewriteRule `json:"rules,omitempty"`
	RewriteTo string            `json:"rewriteTo"`
}

type xURLRewriteRule struct {
	In      string  `json:"in"`
	Name    *string `json:"name,omitempty"` // every rule but requestBody names its header, parameter or key, even ""
	Pattern string  `json:"pattern"`
	Negate  bool    `json:"negate,omitempty"`
}

type xCachePlugin struct {
	Enabled            bool   `json:"enabled"`
	CacheByRegex       string `json:"cacheByRegex,omitempty"`
	CacheResponseCodes []int  `json:"cacheResponseCodes,omitempty"`
	Timeout            int64  `json:"timeout,omitempty"`
}

type xEnforceTimeout struct {
	Enabled bool `json:"enabled"`
	Value   int  `json:"value"`
}

type xValidateRequest struct {
	Enabled           bool `json:"enabled"`
	ErrorResponseCode int  `json:"errorResponseCode,omitempty"`
}

type xMockResponse struct {
	Enabled bool      `json:"enabled"`
	Code    int       `json:"code,omitempty"`
	Body    string    `json:"body,omitempty"`
	Headers []xHeader `json:"headers,omitempty"`
}

type xVirtualEndpoint struct {
	Enabled        bool    `json:"enabled"`
	FunctionName   string  `json:"functionName"`
	Path           *string `json:"path,omitempty"`
	Body           *string `json:"body,omitempty"`
	ProxyOnError   bool    `json:"proxyOnError,omitempty"`
	RequireSession bool    `json:"requireSession,omitempty"`
}

type xEndpointPlugin struct {
	Enabled      bool   `json:"enabled"`
	FunctionName string `json:"functionName"`
	Path         string `json:"path"`
}

type xCircuitBreaker struct {
	Enabled              bool    `json:"enabled"`
	Threshold            float64 `json:"threshold"`
	SampleSize           int64   `json:"sampleSize"`
	CoolDownPeriod       int     `json:"coolDownPeriod"`
	HalfOpenStateEnabled bool    `json:"halfOpenStateEnabled"`
}

// entries counts the endpoint entries of a version, an upper bound of its operations.
func (ep *extendedPaths) entries() int {
	return len(ep.Ignored) + len(ep.WhiteList) + len(ep.BlackList) + len(ep.MockResponse) + len(ep.Cached) +
		len(ep.AdvanceCacheConfig) + len(ep.Transform) + len(ep.TransformResponse) + len(ep.TransformHeader) +
		len(ep.TransformResponseHeader) + len(ep.HardTimeouts) + len(ep.CircuitBreaker) + len(ep.URLRewrite) +
		len(ep.Virtual) + len(ep.SizeLimit) + len(ep.MethodTransforms) + len(ep.TrackEndpoints) +
		len(ep.DoNotTrackEndpoints) + len(ep.ValidateJSON) + len(ep.Internal) + len(ep.GoPlugin) + len(ep.RateLimit)
}

// opBuilder collects the operations of one document.
type opBuilder struct {
	c       *converter
	doc     *oasDocument
	ops     map[string]*xOperation
	keyless bool
	paths   map[string]*templated // raw classic path → its OpenAPI form; nil when it cannot be templated
	pending []contribution        // settings from classic entries, not yet merged into ops
	scratch xOperation            // the settings of the entry get returned last, until record moves them
	entry   contribution          // that entry (its operation and source), while open
	open    bool                  // scratch holds the settings of entry
	// The path items, operations and middleware of the document come from these, a few allocations for
	// all of them instead of one each.
	items   slab[pathItem]
	opers   slab[operation]
	state   slab[opState]
	sources slab[source]
}

// opState is the middleware of one operation while it is built.
type opState struct {
	xOperation
	setBy []setBy // the classic entry that set each setting set so far
	first [2]setBy
}

// setBy is the classic entry that set a setting (an xOperation field).
type setBy struct {
	index int
	*source
}

// setter returns the entry that set the setting index, or nil.
func (x *opState) setter(index int) *source {
	for _, s := range x.setBy {
		if s.index == index {
			return s.source
		}
	}
	return nil
}

// set records the entry that set the setting index.
func (x *opState) set(index int, by *source) {
	for i := range x.setBy {
		if x.setBy[i].index == index {
			x.setBy[i].source = by
			return
		}
	}
	x.setBy = append(x.setBy, setBy{index, by})
}

// slab hands out zeroed values allocated a chunk at a time.
type slab[T any] struct {
	free []T
	size int // the chunk size
}

func (s *slab[T]) new() *T {
	if len(s.free) == 0 {
		s.free = make([]T, max(s.size, 1))
	}
	v := &s.free[0]
	s.free = s.free[1:]
	return v
}

// contribution is one setting that one classic endpoint entry puts on its operation.
type contribution struct {
	*source
	op    *operation
	index int           // the xOperation field
	value reflect.Value // its value
}

// source is a classic endpoint entry: list field, path and method.
type source struct {
	field           listField
	rawPath, method string
}

func (s source) String() string { return s.field.String() + ": " + s.method + " " + s.rawPath }

// templated is a classic path in OpenAPI form.
type templated struct {
	path   string
	params []parameter
}

// operations fills doc.Paths and returns the operations' middleware, in Tyk's filler order.
func (c *converter) operations(t *target, doc *oasDocument) map[string]*xOperation {
	ep := &t.version.ExtendedPaths
	n := ep.entries() // sizes the maps once instead of growing them entry by entry
	if len(doc.Paths) == 0 {
		doc.Paths = make(map[string]*pathItem, n)
	}
	b := &opBuilder{c: c, doc: doc, ops: make(map[string]*xOperation, n), keyless: c.api.UseKeyless, paths: map[string]*templated{},
		pending: make([]contribution, 0, n), items: slab[pathItem]{size: 8}, opers: slab[operation]{size: 8}, state: slab[opState]{size: 4}, sources: slab[source]{size: 8}}
	at := "version_data.versions[" + strconv.Quote(t.versionName) + "]"
	field := func(name string) listField { return listField{at, name} }

	for _, l := range []struct {
		name string
		list []endpointMeta
		set  func(*xOperation, *xAllowance)
	}{
		{"white_list", ep.WhiteList, func(o *xOperation, a *xAllowance) { o.Allow = a }},
		{"black_list", ep.BlackList, func(o *xOperation, a *xAllowance) { o.Block = a }},
		{"ignored", ep.Ignored, func(o *xOperation, a *xAllowance) { o.IgnoreAuthentication = a }},
	} {
		for _, e := range l.list {
			if op := b.get(field(l.name), e.Path, e.Method); op != nil {
				l.set(op, &xAllowance{Enabled: !e.Disabled, IgnoreCase: e.IgnoreCase})
			}
		}
	}
	for _, e := range ep.MethodTransforms {
		f := field("method_transforms")
		if op := b.get(f, e.Path, e.Method); op != nil {
			to := strings.ToUpper(e.ToMethod)
			if !validMethod(to) {
				c.fail("%s: %s %s: to_method %q is not an HTTP method", f, e.Method, e.Path, e.ToMethod)
			}
			op.TransformRequestMethod = &xTransformMethod{Enabled: !e.Disabled, ToMethod: to}
		}
	}
	for _, e := range ep.Transform {
		if op := b.get(field("transform"), e.Path, e.Method); op != nil {
			op.TransformRequestBody = c.transformBody(field("transform"), e)
		}
	}
	for _, e := range ep.TransformResponse {
		if op := b.get(field("transform_response"), e.Path, e.Method); op != nil {
			op.TransformResponseBody = c.transformBody(field("transform_response"), e)
		}
	}
	for _, e := range ep.TransformHeader {
		if op := b.get(field("transform_headers"), e.Path, e.Method); op != nil {
			op.TransformRequestHeaders = &xTransformHeaders{Enabled: !e.Disabled, Remove: e.DeleteHeaders, Add: headersOf(e.AddHeaders)}
		}
	}
	for _, e := range ep.TransformResponseHeader {
		if op := b.get(field("transform_response_headers"), e.Path, e.Method); op != nil {
			op.TransformResponseHeaders = &xTransformHeaders{Enabled: !e.Disabled, Remove: e.DeleteHeaders, Add: headersOf(e.AddHeaders)}
		}
	}
	for _, e := range ep.URLRewrite {
		if op := b.get(field("url_rewrites"), e.Path, e.Method); op != nil {
			op.URLRewrite = c.urlRewrite(field("url_rewrites"), e)
		}
	}
	for _, e := range ep.Internal {
		if op := b.get(field("internal"), e.Path, e.Method); op != nil {
			op.Internal = &xEnabled{Enabled: !e.Disabled}
		}
	}
	for _, e := range ep.AdvanceCacheConfig {
		f := field("advance_cache_config")
		if op := b.get(f, e.Path, e.Method); op != nil {
			timeout := e.Timeout
			if timeout == 0 && !e.Disabled {
				timeout = 60
			}
			if timeout < 0 {
				c.fail("%s: %s %s: timeout %d is negative", f, e.Method, e.Path, timeout)
			}
			op.Cache = &xCachePlugin{Enabled: !e.Disabled, CacheByRegex: e.CacheKeyRegex, CacheResponseCodes: e.CacheOnlyResponseCodes, Timeout: timeout}
		}
	}
	for _, e := range ep.HardTimeouts {
		f := field("hard_timeouts")
		if op := b.get(f, e.Path, e.Method); op != nil {
			if e.TimeOut < 0 {
				c.fail("%s: %s %s: timeout %d is negative", f, e.Method, e.Path, e.TimeOut)
			}
			op.EnforceTimeout = &xEnforceTimeout{Enabled: !e.Disabled, Value: e.TimeOut}
		}
	}
	for _, e := range ep.ValidateJSON {
		if op := b.get(field("validate_json"), e.Path, e.Method); op != nil {
			schema := e.Schema
			if _, ok := schema["$schema"]; ok {
				schema = make(map[string]any, len(e.Schema))
				for k, v := range e.Schema {
					if k != "$schema" {
						schema[k] = v
					}
				}
			}
			op.ValidateRequest = &xValidateRequest{Enabled: !e.Disabled, ErrorResponseCode: e.ErrorResponseCode}
			b.setRequestBody(field("validate_json"), e.Path, e.Method, requestBody{Content: map[string]mediaType{"application/json": {Schema: schema}}})
		}
	}
	for _, e := range ep.Virtual {
		f := field("virtual")
		if op := b.get(f, e.Path, e.Method); op != nil {
			v := &xVirtualEndpoint{Enabled: !e.Disabled, FunctionName: e.ResponseFunctionName, ProxyOnError: e.ProxyOnError, RequireSession: e.UseSession}
			src := e.FunctionSourceURI
			switch e.FunctionSourceType {
			case "blob":
				v.Body = &src
			case "file":
				v.Path = &src
			default:
				c.fail("%s: %s %s: function_source_type %q is not one of blob, file", f, e.Method, e.Path, e.FunctionSourceType)
			}
			op.VirtualEndpoint = v
		}
	}
	for _, e := range ep.GoPlugin {
		if op := b.get(field("go_plugin"), e.Path, e.Method); op != nil {
			op.PostPlugins = []xEndpointPlugin{{Enabled: !e.Disabled, FunctionName: e.SymbolName, Path: e.PluginPath}}
		}
	}
	for _, e := range ep.CircuitBreaker {
		f := field("circuit_breakers")
		if op := b.get(f, e.Path, e.Method); op != nil {
			if e.ThresholdPercent < 0 || e.ThresholdPercent > 1 {
				c.fail("%s: %s %s: threshold_percent %v is not between 0 and 1", f, e.Method, e.Path, e.ThresholdPercent)
			}
			if e.Samples < 0 || e.ReturnToServiceAfter < 0 {
				c.fail("%s: %s %s: samples and return_to_service_after must not be negative", f, e.Method, e.Path)
			}
			op.CircuitBreaker = &xCircuitBreaker{Enabled: !e.Disabled, Threshold: e.ThresholdPercent, SampleSize: e.Samples,
				CoolDownPeriod: e.ReturnToServiceAfter, HalfOpenStateEnabled: !e.DisableHalfOpenState}
		}
	}
	for _, e := range ep.TrackEndpoints {
		if op := b.get(field("track_endpoints"), e.Path, e.Method); op != nil {
			op.TrackEndpoint = &xEnabled{Enabled: !e.Disabled}
		}
	}
	for _, e := range ep.DoNotTrackEndpoints {
		if op := b.get(field("do_not_track_endpoints"), e.Path, e.Method); op != nil {
			op.DoNotTrackEndpoint = &xEnabled{Enabled: !e.Disabled}
		}
	}
	for _, e := range ep.SizeLimit {
		f := field("size_limits")
		if op := b.get(f, e.Path, e.Method); op != nil {
			if e.SizeLimit < 0 {
				c.fail("%s: %s %s: size_limit %d is negative", f, e.Method, e.Path, e.SizeLimit)
			}
			op.RequestSizeLimit = &xRequestSizeLimit{Enabled: !e.Disabled, Value: e.SizeLimit}
		}
	}
	for _, e := range ep.RateLimit {
		f := field("rate_limit")
		if op := b.get(f, e.Path, e.Method); op != nil {
			if e.Rate <= 0 || e.Per <= 0 {
				c.fail("%s: %s %s: rate %v per %v: both must be positive", f, e.Method, e.Path, e.Rate, e.Per)
				continue
			}
			op.RateLimit = c.rateLimit(endpointField{f, e.Method, e.Path}, e.Rate, e.Per, e.Disabled)
		}
	}
	for _, e := range ep.MockResponse {
		f := field("mock_response")
		if e.origin.name != "" {
			f = e.origin
		}
		op := b.get(f, e.Path, e.Method)
		if op == nil {
			continue
		}
		if e.Code < 100 || e.Code > 599 {
			c.fail("%s: %s %s: mock response code %d is not an HTTP status code", f, e.Method, e.Path, e.Code)
			continue
		}
		op.MockResponse = &xMockResponse{Enabled: !e.Disabled, Code: e.Code, Body: e.Body, Headers: c.mockHeaders(f, e.Method, e.Path, e.Headers)}
		op = b.op(f, e.Path, e.Method)
		oas := *b.doc.Paths[b.paths[e.Path].path].operation(e.Method)
		oas.Responses.remove("default")
		oas.Responses.set(strconv.Itoa(e.Code))
		// Classic serves mocks before authentication, so Tyk OAS needs ignoreAuthentication. A disabled mock
		// must not open the endpoint, unless the API is keyless anyway.
		if op.IgnoreAuthentication == nil {
			op.IgnoreAuthentication = &xAllowance{Enabled: !e.Disabled || b.keyless}
		}
	}
	b.keepRegexPathsClosed("white_list", ep.WhiteList, field("white_list"), true)
	b.keepRegexPathsClosed("ignored", ep.Ignored, field("ignored"), false)
	b.merge()
	return b.ops
}

// mockHeaders are a mock's headers with canonical names (http.CanonicalHeaderKey: "mock" becomes "Mock"), as
// Tyk writes them and as the gateway sends them, sorted by name. Two classic names for one header with
// different values fail the API: the gateway sends one of them, chosen by map order.
func (c *converter) mockHeaders(f listField, method, path string, in map[string]string) []xHeader {
	if len(in) == 0 {
		return nil
	}
	canon := make(map[string]string, len(in))
	for _, k := range sortedKeys(in) {
		name := http.CanonicalHeaderKey(k)
		if v, dup := canon[name]; dup && v != in[k] {
			c.fail("%s: %s %s: mock response headers name %s twice with different values", f, method, path, name)
		}
		canon[name] = in[k]
	}
	return headersOf(canon)
}

// keepRegexPathsClosed keeps an allow or ignore-authentication list as narrow as the classic one. Classic
// matches an entry's path as a regular expression; Tyk OAS matches the path template by structure, so
// /users/{customRegex1} admits /users/abc although the classic entry /users/[0-9]+ did not. A forwarded
// allow entry (narrow) therefore gets its segments' expressions as anchored parameter patterns, enforced by
// validateRequest with 403, the answer classic gives outside its allow list. An ignore-authentication entry
// cannot be narrowed that way without refusing requests classic authenticates, so it fails the API. Mock
// responses never reach the upstream and stay as Tyk converts them.
func (b *opBuilder) keepRegexPathsClosed(list string, entries []endpointMeta, f listField, narrow bool) {
	for _, e := range entries {
		t := b.paths[e.Path]
		if e.Disabled || t == nil || !slices.ContainsFunc(t.params, func(p parameter) bool { return p.regex != "" }) {
			continue
		}
		op := b.op(f, e.Path, e.Method)
		if op == nil || (op.MockResponse != nil && op.MockResponse.Enabled) {
			continue
		}
		if !narrow {
			b.c.fail("%s: %s %s: Tyk OAS matches path parameters by structure, not by regular expression, so skipping "+
				"authentication here would skip it for paths the classic API authenticates; list the paths literally", f, e.Method, e.Path)
			continue
		}
		switch {
		case op.ValidateRequest == nil:
			op.ValidateRequest = &xValidateRequest{Enabled: true, ErrorResponseCode: http.StatusForbidden}
		case !op.ValidateRequest.Enabled:
			b.c.fail("%s: %s %s: the path's regular expression can only be kept by validateRequest, which a disabled "+
				"validate_json entry switches off here", f, e.Method, e.Path)
			continue
		}
		item := b.doc.Paths[t.path]
		for _, p := range t.params {
			if p.regex == "" {
				continue
			}
			for i := range item.Parameters {
				if item.Parameters[i].Name == p.Name {
					item.Parameters[i].Schema.Pattern = "^(?:" + p.regex + ")$"
				}
			}
		}
	}
}

// get returns a fresh record for the settings that one classic entry (list field, path, method) puts on
// its operation, creating the OpenAPI path item and operation on first use; the settings are merged into
// the operation later (merge). It returns nil when the path cannot be expressed in OpenAPI (the problem is
// recorded once per path). The record is a scratch one: fill it before the next call of get, op or merge,
// which records the settings set in it (record).
func (b *opBuilder) get(field listField, rawPath, method string) *xOperation {
	b.record()
	op := b.slot(field, rawPath, method)
	if op == nil {
		return nil
	}
	src := b.sources.new()
	*src = source{field, rawPath, method}
	b.entry, b.open = contribution{source: src, op: op}, true
	return &b.scratch
}

// record moves the settings filled into the scratch record into pending contributions, one per setting.
func (b *opBuilder) record() {
	if !b.open {
		return
	}
	v := reflect.ValueOf(&b.scratch).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsNil() {
			c := b.entry
			c.index, c.value = i, reflect.ValueOf(f.Interface())
			b.pending = append(b.pending, c)
		}
	}
	b.scratch, b.open = xOperation{}, false
}

// op returns the operation for a classic path and method with every setting so far merged into it, for
// the steps that depend on what other entries set.
func (b *opBuilder) op(field listField, rawPath, method string) *xOperation {
	op := b.slot(field, rawPath, method)
	if op == nil {
		return nil
	}
	b.merge()
	return &b.middleware(op).xOperation
}

// middleware returns the middleware of an operation, creating it on first use.
func (b *opBuilder) middleware(op *operation) *opState {
	if op.x == nil {
		op.x = b.state.new()
		op.x.setBy = op.x.first[:0]
		b.ops[op.OperationID] = &op.x.xOperation
	}
	return op.x
}

// merge moves the pending settings into their operations. Several classic entries can land on one Tyk OAS
// operation, which keeps one value per setting. An entry repeated for the same classic path and method
// replaces the earlier one, as Tyk's conversion does (its fixture cache/1 expects it). Different classic
// paths that template alike (/a/[0-9]+ and /a/[a-z]+ both become /a/{customRegex1}) and set a setting
// differently fail the API, instead of one silently replacing the other; equal settings merge.
func (b *opBuilder) merge() {
	b.record()
	for _, p := range b.pending {
		x := b.middleware(p.op)
		dst := reflect.ValueOf(&x.xOperation).Elem().Field(p.index)
		if prev := x.setter(p.index); prev != nil && prev.rawPath != p.rawPath {
			if !reflect.DeepEqual(dst.Interface(), p.value.Interface()) {
				name, _, _ := strings.Cut(reflect.TypeFor[xOperation]().Field(p.index).Tag.Get("json"), ",")
				b.c.fail("%s: its %s differs from the one %s sets, and both become the Tyk OAS operation %s", p.source, name, prev, p.op.OperationID)
			}
			continue
		}
		dst.Set(p.value)
		x.set(p.index, p.source)
	}
	b.pending = b.pending[:0]
}

// slot creates, on first use, the OpenAPI path item and operation of a classic path and method, and returns
// the operation; nil when the path cannot be expressed. An operation that already exists keeps its
// operationId.
func (b *opBuilder) slot(field listField, rawPath, method string) *operation {
	if !strings.HasPrefix(rawPath, "/") || !validMethod(method) {
		return nil // refused by normalisation, which has reported it
	}
	t, seen := b.paths[rawPath]
	if !seen {
		var err error
		t, err = templatePath(rawPath)
		if err != nil {
			b.c.fail("%s: %s: %v", field, rawPath, err)
			t = nil
		}
		b.paths[rawPath] = t
	}
	if t == nil {
		return nil
	}
	item := b.doc.Paths[t.path]
	if item == nil {
		item = b.items.new()
		item.Parameters = t.params
		b.doc.Paths[t.path] = item
	}
	slot := item.operation(method)
	if *slot == nil {
		op := b.opers.new()
		op.OperationID = strings.TrimPrefix(rawPath, "/") + method
		op.keys[0] = "default"
		op.Responses = op.keys[:]
		*slot = op
	}
	return *slot
}

// setRequestBody sets the request body of an operation get has created. Classic paths that become one
// Tyk OAS operation with different request schemas fail the API, as merge does for the middleware.
func (b *opBuilder) setRequestBody(field listField, rawPath, method string, body requestBody) {
	op := *b.doc.Paths[b.paths[rawPath].path].operation(method)
	if prev := op.bodySetBy; prev != "" && prev != rawPath && !reflect.DeepEqual(*op.RequestBody, body) {
		b.c.fail("%s: %s %s: its request schema differs from the one for %s %s, and both become the Tyk OAS operation %s",
			field, method, rawPath, method, prev, op.OperationID)
		return
	}
	op.bodySetBy = rawPath
	op.RequestBody = &body
}

// literalSegment reports whether a path segment is literal text: ^[a-zA-Z0-9._-]+$.
func literalSegment(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// templatePath turns a classic path (a regular expression, possibly with {name} or {name:regex} segments)
// into an OpenAPI path template: literal segments stay, {name} and {name:regex} become {name} (the regex is
// dropped, as Tyk does), and any other segment becomes {customRegexN} with the segment as its pattern.
// A trailing slash is kept.
func templatePath(raw string) (*templated, error) {
	trimmed := strings.Trim(raw, "/")
	if trimmed == "" {
		return &templated{path: "/"}, nil
	}
	var b strings.Builder
	b.Grow(len(raw) + 16)
	var params []parameter
	n := 0
	for seg := range strings.SplitSeq(trimmed, "/") {
		if seg == "" {
			continue
		}
		b.WriteByte('/')
		if literalSegment(seg) {
			b.WriteString(seg)
			continue
		}
		var p parameter
		if len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
			name, regex, _ := strings.Cut(seg[1:len(seg)-1], ":")
			if !literalSegment(name) {
				n++
				name = "customRegex" + strconv.Itoa(n)
			}
			p = parameter{In: "path", Name: name, Required: true, Schema: paramSchema{Type: "string"}, regex: regex}
		} else {
			if err := checkRegex(seg); err != nil {
				return nil, fmt.Errorf("path segment %q is not a valid regular expression: %v", seg, err)
			}
			n++
			p = parameter{In: "path", Name: "customRegex" + strconv.Itoa(n), Required: true, Schema: paramSchema{Type: "string", Pattern: seg}, regex: seg}
		}
		for _, q := range params {
			if q.Name == p.Name {
				return nil, fmt.Errorf("more than one path parameter is named %q", p.Name)
			}
		}
		params = append(params, p)
		b.WriteByte('{')
		b.WriteString(p.Name)
		b.WriteByte('}')
	}
	if b.Len() == 0 {
		b.WriteByte('/')
	} else if strings.HasSuffix(raw, "/") {
		b.WriteByte('/')
	}
	return &templated{path: b.String(), params: params}, nil
}

// validRegexes remembers path segments that parse as regular expressions: APIs share a few patterns, and
// parsing one costs more than the rest of its path. The set is bounded; once full, segments are parsed again.
var validRegexes struct {
	sync.Mutex
	set map[string]bool
}

const maxValidRegexes = 4096

// checkRegex reports whether seg is a valid regular expression (Perl syntax), as syntax.Parse does.
func checkRegex(seg string) error {
	validRegexes.Lock()
	known := validRegexes.set[seg]
	validRegexes.Unlock()
	if known {
		return nil
	}
	if _, err := syntax.Parse(seg, syntax.Perl); err != nil {
		return err
	}
	validRegexes.Lock()
	if validRegexes.set == nil {
		validRegexes.set = make(map[string]bool)
	}
	if len(validRegexes.set) < maxValidRegexes {
		validRegexes.set[strings.Clone(seg)] = true
	}
	validRegexes.Unlock()
	return nil
}

func validMethod(m string) bool {
	for _, h := range httpMethods {
		if h == m {
			return true
		}
	}
	return false
}

func (c *converter) transformBody(field listField, e templateMeta) *xTransformBody {
	td := e.TemplateData
	x := &xTransformBody{Enabled: !e.Disabled, Format: td.Input}
	if x.Format == "" {
		x.Format = "json"
	}
	if x.Format != "json" && x.Format != "xml" {
		c.fail("%s: %s %s: input_type %q is not one of json, xml", field, e.Method, e.Path, td.Input)
	}
	src := td.TemplateSource
	switch td.Mode {
	case "blob":
		x.Body = &src
	case "file":
		x.Path = &src
	default:
		c.fail("%s: %s %s: template_mode %q is not one of blob, file", field, e.Method, e.Path, td.Mode)
	}
	return x
}

func (c *converter) urlRewrite(field listField, e urlRewriteMeta) *xURLRewrite {
	x := &xURLRewrite{Enabled: !e.Disabled, Pattern: e.MatchPattern, RewriteTo: e.RewriteTo}
	for i, tr := range e.Triggers {
		if tr.On != "any" && tr.On != "all" {
			c.fail("%s: %s %s: triggers[%d].on %q is not one of any, all", field, e.Method, e.Path, i, tr.On)
		}
		t := xURLRewriteTrigger{Condition: tr.On, RewriteTo: tr.RewriteTo}
		o := tr.Options
		for _, group := range []struct {
			in string
			m  map[string]regexMatch
		}{
			{"header", o.HeaderMatches}, {"query", o.QueryValMatches}, {"path", o.PathPartMatches},
			{"sessionMetadata", o.SessionMetaMatches}, {"requestContext", o.RequestContextMatches},
		} {
			for _, name := range sortedKeys(group.m) {
				r := group.m[name]
				t.Rules = append(t.Rules, xURLRewriteRule{In: group.in, Name: &name, Pattern: r.MatchPattern, Negate: r.Reverse})
			}
		}
		if p := o.PayloadMatches; p.MatchPattern != "" {
			t.Rules = append(t.Rules, xURLRewriteRule{In: "requestBody", Pattern: p.MatchPattern, Negate: p.Reverse})
		}
		x.Triggers = append(x.Triggers, t)
	}
	return x
}
