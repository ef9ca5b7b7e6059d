package convert

import (
	"strconv"
	"strings"
)

// kind is one kind of per-endpoint middleware: a classic extended_paths list and the setting of an
// x-tyk-api-gateway operation it becomes. toOAS converts every entry of the list of one version (see
// opBuilder.get for how an entry's settings reach its operation).
//
// To add a kind: add its classic list to extendedPaths, its setting to xOperation, and one row here with its
// two functions, in the place Tyk's filler gives it; the round-trip tests then cover it.
//
// toClassic is the other direction (ToClassic): it appends the setting of one operation, if it has one, to the
// list as an entry for path and method. It is nil for the settings a gateway reads from the OAS document
// itself and not from the classic definition derived from it (validateRequest, mockResponse), as in Tyk's
// OAS.ExtractTo.
type kind struct {
	list      string // the classic extended_paths field
	toOAS     func(b *opBuilder, ep *extendedPaths, f listField)
	toClassic func(ep *extendedPaths, x *xOperation, e endpointRef)
}

// kinds are the per-endpoint middleware kinds in the order of Tyk's filler (oas.fillPathsAndOperations, see
// ../../../../../shared/reference/tyk-classic-to-oas.md §1.6). The order matters: an entry converted later sees
// what earlier ones set (a mock response does not override ignoreAuthentication), and problems are reported in
// this order.
var kinds = []kind{
	{list: "white_list", toOAS: allowToOAS, toClassic: allowToClassic},
	{list: "black_list", toOAS: blockToOAS, toClassic: blockToClassic},
	{list: "ignored", toOAS: ignoreToOAS, toClassic: ignoreToClassic},
	{list: "method_transforms", toOAS: methodTransformToOAS, toClassic: methodTransformToClassic},
	{list: "transform", toOAS: transformToOAS, toClassic: transformToClassic},
	{list: "transform_response", toOAS: transformResponseToOAS, toClassic: transformResponseToClassic},
	{list: "transform_headers", toOAS: transformHeadersToOAS, toClassic: transformHeadersToClassic},
	{list: "transform_response_headers", toOAS: transformResponseHeadersToOAS, toClassic: transformResponseHeadersToClassic},
	{list: "url_rewrites", toOAS: urlRewriteToOAS, toClassic: urlRewriteToClassic},
	{list: "internal", toOAS: internalToOAS, toClassic: internalToClassic},
	{list: "advance_cache_config", toOAS: cacheToOAS, toClassic: cacheToClassic},
	{list: "hard_timeouts", toOAS: hardTimeoutToOAS, toClassic: hardTimeoutToClassic},
	{list: "validate_json", toOAS: validateJSONToOAS},
	{list: "virtual", toOAS: virtualToOAS, toClassic: virtualToClassic},
	{list: "go_plugin", toOAS: goPluginToOAS, toClassic: goPluginToClassic},
	{list: "circuit_breakers", toOAS: circuitBreakerToOAS, toClassic: circuitBreakerToClassic},
	{list: "track_endpoints", toOAS: trackToOAS, toClassic: trackToClassic},
	{list: "do_not_track_endpoints", toOAS: doNotTrackToOAS, toClassic: doNotTrackToClassic},
	{list: "size_limits", toOAS: sizeLimitToOAS, toClassic: sizeLimitToClassic},
	{list: "rate_limit", toOAS: rateLimitToOAS, toClassic: rateLimitToClassic},
	{list: "mock_response", toOAS: mockResponseToOAS},
}

// allowance is an allow, block or ignore-authentication entry.
func allowance(e endpointMeta) *xAllowance {
	return &xAllowance{Enabled: !e.Disabled, IgnoreCase: e.IgnoreCase}
}

func allowToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.WhiteList {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.Allow = allowance(e)
		}
	}
}

func blockToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.BlackList {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.Block = allowance(e)
		}
	}
}

func ignoreToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.Ignored {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.IgnoreAuthentication = allowance(e)
		}
	}
}

func methodTransformToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.MethodTransforms {
		if op := b.get(f, e.Path, e.Method); op != nil {
			to := strings.ToUpper(e.ToMethod)
			if !validMethod(to) {
				b.c.fail("%s: %s %s: to_method %q is not an HTTP method", f, e.Method, e.Path, e.ToMethod)
			}
			op.TransformRequestMethod = &xTransformMethod{Enabled: !e.Disabled, ToMethod: to}
		}
	}
}

func transformToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.Transform {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.TransformRequestBody = b.c.transformBody(f, e)
		}
	}
}

func transformResponseToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.TransformResponse {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.TransformResponseBody = b.c.transformBody(f, e)
		}
	}
}

func transformHeadersToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.TransformHeader {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.TransformRequestHeaders = &xTransformHeaders{Enabled: !e.Disabled, Remove: e.DeleteHeaders, Add: headersOf(e.AddHeaders)}
		}
	}
}

func transformResponseHeadersToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.TransformResponseHeader {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.TransformResponseHeaders = &xTransformHeaders{Enabled: !e.Disabled, Remove: e.DeleteHeaders, Add: headersOf(e.AddHeaders)}
		}
	}
}

func urlRewriteToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.URLRewrite {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.URLRewrite = b.c.urlRewrite(f, e)
		}
	}
}

func internalToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.Internal {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.Internal = &xEnabled{Enabled: !e.Disabled}
		}
	}
}

func cacheToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.AdvanceCacheConfig {
		if op := b.get(f, e.Path, e.Method); op != nil {
			timeout := e.Timeout
			if timeout == 0 && !e.Disabled {
				timeout = 60
			}
			if timeout < 0 {
				b.c.fail("%s: %s %s: timeout %d is negative", f, e.Method, e.Path, timeout)
			}
			op.Cache = &xCachePlugin{Enabled: !e.Disabled, CacheByRegex: e.CacheKeyRegex, CacheResponseCodes: e.CacheOnlyResponseCodes, Timeout: timeout}
		}
	}
}

func hardTimeoutToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.HardTimeouts {
		if op := b.get(f, e.Path, e.Method); op != nil {
			if e.TimeOut < 0 {
				b.c.fail("%s: %s %s: timeout %d is negative", f, e.Method, e.Path, e.TimeOut)
			}
			op.EnforceTimeout = &xEnforceTimeout{Enabled: !e.Disabled, Value: e.TimeOut}
		}
	}
}

// validateJSONToOAS makes validateRequest and the operation's request body schema (without "$schema"), a
// required body: classic validate_json refuses a request without one.
func validateJSONToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.ValidateJSON {
		if op := b.get(f, e.Path, e.Method); op != nil {
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
			b.setRequestBody(f, e.Path, e.Method, requestBody{Content: map[string]mediaType{"application/json": {Schema: schema}},
				Required: true})
		}
	}
}

func virtualToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.Virtual {
		if op := b.get(f, e.Path, e.Method); op != nil {
			v := &xVirtualEndpoint{Enabled: !e.Disabled, FunctionName: e.ResponseFunctionName, ProxyOnError: e.ProxyOnError, RequireSession: e.UseSession}
			src := e.FunctionSourceURI
			switch e.FunctionSourceType {
			case "blob":
				v.Body = &src
			case "file":
				v.Path = &src
			default:
				b.c.fail("%s: %s %s: function_source_type %q is not one of blob, file", f, e.Method, e.Path, e.FunctionSourceType)
			}
			op.VirtualEndpoint = v
		}
	}
}

func goPluginToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.GoPlugin {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.PostPlugins = []xEndpointPlugin{{Enabled: !e.Disabled, FunctionName: e.SymbolName, Path: e.PluginPath}}
		}
	}
}

func circuitBreakerToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.CircuitBreaker {
		if op := b.get(f, e.Path, e.Method); op != nil {
			if e.ThresholdPercent < 0 || e.ThresholdPercent > 1 {
				b.c.fail("%s: %s %s: threshold_percent %v is not between 0 and 1", f, e.Method, e.Path, e.ThresholdPercent)
			}
			if e.Samples < 0 || e.ReturnToServiceAfter < 0 {
				b.c.fail("%s: %s %s: samples and return_to_service_after must not be negative", f, e.Method, e.Path)
			}
			op.CircuitBreaker = &xCircuitBreaker{Enabled: !e.Disabled, Threshold: e.ThresholdPercent, SampleSize: e.Samples,
				CoolDownPeriod: e.ReturnToServiceAfter, HalfOpenStateEnabled: !e.DisableHalfOpenState}
		}
	}
}

func trackToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.TrackEndpoints {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.TrackEndpoint = &xEnabled{Enabled: !e.Disabled}
		}
	}
}

func doNotTrackToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.DoNotTrackEndpoints {
		if op := b.get(f, e.Path, e.Method); op != nil {
			op.DoNotTrackEndpoint = &xEnabled{Enabled: !e.Disabled}
		}
	}
}

func sizeLimitToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.SizeLimit {
		if op := b.get(f, e.Path, e.Method); op != nil {
			if e.SizeLimit < 0 {
				b.c.fail("%s: %s %s: size_limit %d is negative", f, e.Method, e.Path, e.SizeLimit)
			}
			op.RequestSizeLimit = &xRequestSizeLimit{Enabled: !e.Disabled, Value: e.SizeLimit}
		}
	}
}

func rateLimitToOAS(b *opBuilder, ep *extendedPaths, f listField) {
	for _, e := range ep.RateLimit {
		op := b.get(f, e.Path, e.Method)
		if op == nil {
			continue
		}
		if e.Rate <= 0 || e.Per <= 0 {
			b.c.fail("%s: %s %s: rate %v per %v: both must be positive", f, e.Method, e.Path, e.Rate, e.Per)
			continue
		}
		op.RateLimit = b.c.rateLimit(endpointField{f, e.Method, e.Path}, e.Rate, e.Per, e.Disabled)
	}
}

// mockResponseToOAS converts the mock responses, including those normalisation made from method_actions
// (named by their origin list). The operation answers the mock's status code instead of "default", and
// ignores authentication: classic serves mocks before authentication. A disabled mock must not open the
// endpoint, unless the API is keyless anyway.
func mockResponseToOAS(b *opBuilder, ep *extendedPaths, list listField) {
	for _, e := range ep.MockResponse {
		f := list
		if e.origin.name != "" {
			f = e.origin
		}
		op := b.get(f, e.Path, e.Method)
		if op == nil {
			continue
		}
		if e.Code < 100 || e.Code > 599 {
			b.c.fail("%s: %s %s: mock response code %d is not an HTTP status code", f, e.Method, e.Path, e.Code)
			continue
		}
		op.MockResponse = &xMockResponse{Enabled: !e.Disabled, Code: e.Code, Body: e.Body, Headers: b.c.mockHeaders(f, e.Method, e.Path, e.Headers)}
		op = b.op(f, e.Path, e.Method)
		oas := *b.doc.Paths[b.paths[e.Path].path].operation(e.Method)
		oas.Responses.remove("default")
		oas.Responses.set(strconv.Itoa(e.Code))
		if op.IgnoreAuthentication == nil {
			op.IgnoreAuthentication = &xAllowance{Enabled: !e.Disabled || b.keyless}
		}
	}
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
