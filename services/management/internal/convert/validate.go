package convert

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/services/management/internal/kvref"
)

// The converter's guard on every produced document, so that a conversion fails instead of producing a
// document the service would refuse: the OpenAPI 3.0 rules a converted document can break and the structural
// rules of the x-tyk-api-gateway schema (required members, non-blank names, enums, ranges). The project's rule
// set is oasdoc.Check, and the tests hold every converted document to it (golden and fixture cases, fuzzing,
// round trips); this guard restates the part of it a conversion can break on the typed document before
// serialisation, in about 8 µs where oasdoc.Check (kin-openapi on the bytes) takes about 1 ms.

// The schema's readable durations: ^(\d+h)?(\d+m)?(\d+s)?$ (readableSeconds) and
// ^(\d+h)?(\d+m)?(\d+s)?(\d+ms)?(\d+µs)?(\d+ns)?$ (readableFull), matched without a regular expression
// (every converted document checks a few; FuzzReadable holds them to the expressions).
var (
	secondsUnits = []string{"h", "m", "s"}
	fullUnits    = []string{"h", "m", "s", "ms", "µs", "ns"}
)

func readableSeconds(s string) bool { return readable(s, secondsUnits) }
func readableFull(s string) bool    { return readable(s, fullUnits) }

// readable reports whether s is a run of ASCII digits and a unit, repeated, with the units among units in
// their order, each at most once ("" included).
func readable(s string, units []string) bool {
	next := 0 // the first unit still allowed
	for s != "" {
		digits := 0
		for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
			digits++
		}
		unit := digits
		for unit < len(s) && (s[unit] < '0' || s[unit] > '9') {
			unit++
		}
		if digits == 0 || unit == digits {
			return false
		}
		i := next
		for i < len(units) && units[i] != s[digits:unit] {
			i++
		}
		if i == len(units) {
			return false
		}
		next, s = i+1, s[unit:]
	}
	return true
}

// nonBlank matches the schema's \S+: some character that is not white space.
func nonBlank(s string) bool { return strings.TrimSpace(s) != "" }

// responseKey reports whether k is "default" or a status code such as 200 or 4XX.
func responseKey(k string) bool {
	if k == "default" {
		return true
	}
	if len(k) != 3 || k[0] < '1' || k[0] > '5' {
		return false
	}
	digits := k[1] >= '0' && k[1] <= '9' && k[2] >= '0' && k[2] <= '9'
	return digits || k[1:] == "XX"
}

// pathParamNames lists the {name} templates of an OpenAPI path.
func pathParamNames(p string) []string {
	var names []string
	for {
		open := strings.IndexByte(p, '{')
		if open < 0 {
			return names
		}
		end := strings.IndexAny(p[open+1:], "{}")
		if end < 0 {
			return names
		}
		if p[open+1+end] == '}' && end > 0 {
			names = append(names, p[open+1:open+1+end])
		}
		p = p[open+1+end:]
	}
}

// validateDocument returns one message per problem, each naming the document field.
func validateDocument(d *oasDocument) []string {
	v := &validator{}
	v.openAPI(d)
	v.extension(&d.XTyk)
	slices.Sort(v.problems) // maps are walked in any order
	return v.problems
}

type validator struct {
	problems []string
}

func (v *validator) add(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

// opField names an operation of paths in messages; its text is built only for a message.
type opField struct{ path, method string }

func (f opField) String() string { return "paths." + f.path + "." + strings.ToLower(f.method) }

// operationField names the middleware of an operation in messages.
type operationField string

func (f operationField) String() string {
	return "x-tyk-api-gateway.middleware.operations." + string(f)
}

func (v *validator) openAPI(d *oasDocument) {
	if !strings.HasPrefix(d.OpenAPI, "3.0.") {
		v.add("openapi: %q is not 3.0.x", d.OpenAPI)
	}
	if d.Info.Title == "" {
		v.add("info.title: must be a non-empty string")
	}
	if d.Info.Version == "" {
		v.add("info.version: must be a non-empty string")
	}
	for p, item := range d.Paths {
		v.pathItem(p, item)
	}
	v.securitySchemes(d)
}

// pathItem checks a path, its parameters and its operations.
func (v *validator) pathItem(p string, item *pathItem) {
	if !strings.HasPrefix(p, "/") {
		v.add("paths: path %q does not start with /", p)
	}
	names := pathParamNames(p)
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			v.add("paths.%s: more than one path parameter is named %q", p, n)
		}
	}
	for _, n := range names {
		declared := slices.ContainsFunc(item.Parameters, func(q parameter) bool { return q.Name == n && q.In == "path" && q.Required })
		if !declared {
			v.add("paths.%s.parameters: path parameter %q is not declared", p, n)
		}
	}
	for _, m := range httpMethods {
		if op := *item.operation(m); op != nil {
			v.operation(opField{p, m}, op)
		}
	}
}

func (v *validator) operation(at opField, op *operation) {
	if !nonBlank(op.OperationID) {
		v.add("%s.operationId: must not be blank", at)
	}
	if len(op.Responses) <= 0 {
		v.add("%s.responses: must be a non-empty object", at)
	}
	for _, code := range op.Responses {
		if !responseKey(code) {
			v.add("%s.responses: %q is not a status code", at, code)
		}
	}
	if op.RequestBody != nil && len(op.RequestBody.Content) <= 0 {
		v.add("%s.requestBody.content: must not be empty", at)
	}
}

// securitySchemes checks the schemes and that the security requirements name declared ones.
func (v *validator) securitySchemes(d *oasDocument) {
	var schemes map[string]*securityScheme
	if d.Components != nil {
		schemes = d.Components.SecuritySchemes
	}
	for _, name := range sortedKeys(schemes) {
		v.securityScheme(name, schemes[name])
	}
	for _, req := range d.Security {
		for _, name := range sortedKeys(req) {
			if schemes[name] == nil {
				v.add("security: Missing required Security Scheme %q in components.securitySchemes", name)
			}
		}
	}
}

func (v *validator) securityScheme(name string, s *securityScheme) {
	if !literalSegment(name) {
		v.add("components.securitySchemes: %q is not a valid name", name)
	}
	switch s.Type {
	case "apiKey":
		if !(s.Name != "" && slices.Contains([]string{"header", "query", "cookie"}, s.In)) {
			v.add("components.securitySchemes.%s: an apiKey scheme needs a name and in (header, query or cookie)", name)
		}
	case "http":
		if s.Scheme == "" {
			v.add("components.securitySchemes.%s.scheme: must not be empty", name)
		}
	case "oauth2":
		if s.Flows == nil {
			v.add("components.securitySchemes.%s.flows: must be present", name)
		}
	default:
		v.add("components.securitySchemes.%s.type: %q is not a security scheme type", name, s.Type)
	}
}

func (v *validator) extension(x *xTykAPIGateway) {
	const at = "x-tyk-api-gateway"
	if !nonBlank(x.Info.Name) {
		v.add("%s.info.name: must not be blank", at)
	}
	if vs := x.Info.Versioning; vs != nil {
		switch vs.Location {
		case "header", "url-param":
			if !nonBlank(vs.Key) {
				v.add("%s.info.versioning.key: must not be blank for location %s", at, vs.Location)
			}
		case "url":
		default:
			v.add("%s.info.versioning.location: %q is not one of header, url-param, url", at, vs.Location)
		}
		for i, e := range vs.Versions {
			if !(e.Name != "" && e.ID != "") {
				v.add("%s.info.versioning.versions.%d: name and id are required", at, i)
			}
		}
	}
	v.upstream(&x.Upstream)
	v.server(&x.Server)
	if x.Middleware != nil {
		v.middleware(x.Middleware)
	}
}

const upstreamField = "x-tyk-api-gateway.upstream"

func (v *validator) upstream(u *xUpstream) {
	const at = upstreamField
	hasTargets := u.LoadBalancing != nil && u.LoadBalancing.Enabled && len(u.LoadBalancing.Targets) > 0
	discovered := u.ServiceDiscovery != nil && u.ServiceDiscovery.Enabled
	if strings.TrimSpace(u.URL) == "" {
		if !(hasTargets || discovered) {
			v.add("%s.url: must not be empty (no load balancing targets or service discovery either)", at)
		}
	} else if _, err := url.Parse(u.URL); err != nil {
		v.add("%s.url: %q is not a URI reference", at, u.URL)
	}
	if lb := u.LoadBalancing; lb != nil {
		v.loadBalancing(lb)
	}
	if ut := u.UptimeTests; ut != nil {
		v.uptimeTests(ut)
	}
	if rl := u.RateLimit; rl != nil && !readableSeconds(rl.Per) {
		v.add("%s.rateLimit.per: %q is not a duration", at, rl.Per)
	}
	if a := u.Authentication; a != nil {
		v.upstreamAuth(a)
	}
	v.upstreamTLS(u)
}

func (v *validator) loadBalancing(lb *xLoadBalancing) {
	const at = upstreamField
	if !(!lb.Enabled || len(lb.Targets) > 0) {
		v.add("%s.loadBalancing.targets: must not be empty when load balancing is enabled", at)
	}
	for i, t := range lb.Targets {
		if !nonBlank(t.URL) {
			v.add("%s.loadBalancing.targets.%d.url: must not be blank", at, i)
		}
	}
}

func (v *validator) uptimeTests(ut *xUptimeTests) {
	const at = upstreamField
	for _, d := range []string{ut.HostDownRetestPeriod, ut.LogRetentionPeriod} {
		if !readableFull(d) {
			v.add("%s.uptimeTests: %q is not a duration", at, d)
		}
	}
	for i, t := range ut.Tests {
		if !readableFull(t.Timeout) {
			v.add("%s.uptimeTests.tests.%d.timeout: %q is not a duration", at, i, t.Timeout)
		}
	}
}

func (v *validator) upstreamAuth(a *xUpstreamAuth) {
	const at = upstreamField
	if b := a.BasicAuth; b != nil && !(nonBlank(b.Username) && nonBlank(b.Password)) {
		v.add("%s.authentication.basicAuth: username and password must not be blank", at)
	}
	o := a.OAuth
	if o == nil {
		return
	}
	if cc := o.ClientCredentials; cc != nil && !(nonBlank(cc.ClientID) && nonBlank(cc.ClientSecret) && nonBlank(cc.TokenURL)) {
		v.add("%s.authentication.oauth.clientCredentials: clientId, clientSecret and tokenUrl must not be blank", at)
	}
	if pw := o.Password; pw != nil && !(nonBlank(pw.ClientID) && nonBlank(pw.TokenURL) && nonBlank(pw.Username) && nonBlank(pw.Password)) {
		v.add("%s.authentication.oauth.password: clientId, tokenUrl, username and password must not be blank", at)
	}
}

// upstreamTLS checks the domains of the certificates and pins and the TLS versions.
func (v *validator) upstreamTLS(u *xUpstream) {
	const at = upstreamField
	if mt := u.MutualTLS; mt != nil {
		for i, m := range mt.DomainToCertificateMapping {
			if !domainPattern.MatchString(m.Domain) {
				v.add("%s.mutualTLS.domainToCertificateMapping.%d.domain: %q is not a domain", at, i, m.Domain)
			}
		}
	}
	if cp := u.CertificatePinning; cp != nil {
		for i, m := range cp.DomainToPublicKeysMapping {
			if !domainPattern.MatchString(m.Domain) {
				v.add("%s.certificatePinning.domainToPublicKeysMapping.%d.domain: %q is not a domain", at, i, m.Domain)
			}
		}
	}
	if tr := u.TLSTransport; tr != nil {
		for _, ver := range []string{tr.MinVersion, tr.MaxVersion} {
			if !(ver == "" || slices.Contains([]string{"1.0", "1.1", "1.2", "1.3"}, ver)) {
				v.add("%s.tlsTransport: %q is not a TLS version", at, ver)
			}
		}
	}
}

const serverField = "x-tyk-api-gateway.server"

func (v *validator) server(s *xServer) {
	const at = serverField
	if !nonBlank(s.ListenPath.Value) {
		v.add("%s.listenPath.value: must not be blank", at)
	} else if !strings.HasPrefix(s.ListenPath.Value, "/") && !kvref.Is(s.ListenPath.Value) {
		// as oasdoc.Check; the gateway resolves a KV reference before it reads the path
		v.add("%s.listenPath.value: must start with / (the gateway drops an API whose listen path does not) or be a KV reference", at)
	}
	if !(s.Port == 0 || (s.Port >= 1 && s.Port <= 65535)) {
		v.add("%s.port: %d is not a port", at, s.Port)
	}
	if !slices.Contains([]string{"", "http", "https", "h2c"}, s.Protocol) {
		v.add("%s.protocol: %q is not one of http, https, h2c", at, s.Protocol)
	}
	if gt := s.GatewayTags; gt != nil {
		for i, t := range gt.Tags {
			if slices.Contains(gt.Tags[:i], t) {
				v.add("%s.gatewayTags.tags: %q is listed twice", at, t)
			}
		}
	}
	for i, e := range s.EventHandlers {
		v.eventHandler(i, &e)
	}
	if a := s.Authentication; a != nil {
		v.authentication(a)
	}
}

func (v *validator) eventHandler(i int, e *xEventHandler) {
	const at = serverField
	if !slices.Contains(eventTriggers, e.Trigger) {
		v.add("%s.eventHandlers.%d.trigger: %q is not an event", at, i, e.Trigger)
	}
	if !readableSeconds(e.CooldownPeriod) {
		v.add("%s.eventHandlers.%d.cooldownPeriod: %q is not a duration", at, i, e.CooldownPeriod)
	}
	switch e.Type {
	case "webhook":
		if !slices.Contains(webhookMethods, e.Method) {
			v.add("%s.eventHandlers.%d.method: %q is not one of %v", at, i, e.Method, webhookMethods)
		}
		if e.BodyTemplate == nil {
			v.add("%s.eventHandlers.%d.bodyTemplate: is required", at, i)
		}
	case "custom":
		if e.Path == nil {
			v.add("%s.eventHandlers.%d.path: is required", at, i)
		}
	case "log":
		if e.LogPrefix == nil {
			v.add("%s.eventHandlers.%d.logPrefix: is required", at, i)
		}
	default:
		v.add("%s.eventHandlers.%d.type: %q is not one of webhook, custom, log", at, i, e.Type)
	}
}

func (v *validator) authentication(a *xAuthentication) {
	const at = serverField
	if !slices.Contains(baseIdentityProviders, a.BaseIdentityProvider) {
		v.add("%s.authentication.baseIdentityProvider: %q is not a provider", at, a.BaseIdentityProvider)
	}
	if kl := a.CustomKeyLifetime; kl != nil && kl.Value != "" && !(readableSeconds(kl.Value) && kl.Value != "0s") {
		v.add("%s.authentication.customKeyLifetime.value: %q is not a positive duration", at, kl.Value)
	}
	if cu := a.Custom; cu != nil && cu.Config != nil && cu.Config.IDExtractor != nil {
		v.idExtractor(cu.Config.IDExtractor)
	}
	if a.Enabled && !(a.SecuritySchemes != nil || a.HMAC != nil || a.OIDC != nil || a.Custom != nil) {
		v.add("%s.authentication: authentication is enabled but no method is configured", at)
	}
}

func (v *validator) idExtractor(ex *xIDExtractor) {
	const at = serverField
	if !slices.Contains([]string{"body", "header", "form"}, ex.Source) {
		v.add("%s.authentication.custom.config.idExtractor.source: %q is not one of body, header, form", at, ex.Source)
	}
	if !slices.Contains([]string{"value", "xpath", "regex"}, ex.With) {
		v.add("%s.authentication.custom.config.idExtractor.with: %q is not one of value, xpath, regex", at, ex.With)
	}
}

func (v *validator) middleware(m *xMiddleware) {
	const at = "x-tyk-api-gateway.middleware"
	if g := m.Global; g != nil {
		if tl := g.TrafficLogs; tl != nil && tl.CustomRetentionPeriod != "" && !readableSeconds(tl.CustomRetentionPeriod) {
			v.add("%s.global.trafficLogs.customRetentionPeriod: %q is not a duration", at, tl.CustomRetentionPeriod)
		}
		if rs := g.RequestSizeLimit; rs != nil && rs.Value < 0 {
			v.add("%s.global.requestSizeLimit.value: %d is negative", at, rs.Value)
		}
	}
	for id, op := range m.Operations {
		o := operationField(id)
		if !nonBlank(id) {
			v.add("%s: the operationId must not be blank", o)
		}
		v.transforms(o, op)
		v.limits(o, op)
		v.responses(o, op)
	}
}

// transforms checks what an operation changes of the request or the response.
func (v *validator) transforms(o operationField, op *xOperation) {
	for _, tb := range []*xTransformBody{op.TransformRequestBody, op.TransformResponseBody} {
		if tb == nil {
			continue
		}
		if !(tb.Format == "json" || tb.Format == "xml") {
			v.add("%s: transform body format %q is not one of json, xml", o, tb.Format)
		}
		if !(tb.Body != nil || tb.Path != nil) {
			v.add("%s: a body transform needs a body or a path", o)
		}
	}
	if tm := op.TransformRequestMethod; tm != nil && !validMethod(tm.ToMethod) {
		v.add("%s.transformRequestMethod.toMethod: %q is not an HTTP method", o, tm.ToMethod)
	}
	if ur := op.URLRewrite; ur != nil {
		for i, t := range ur.Triggers {
			if !(t.Condition == "any" || t.Condition == "all") {
				v.add("%s.urlRewrite.triggers.%d.condition: %q is not one of any, all", o, i, t.Condition)
			}
		}
	}
}

// limits checks an operation's timeouts, sizes and rates.
func (v *validator) limits(o operationField, op *xOperation) {
	if c := op.Cache; c != nil && c.Timeout < 0 {
		v.add("%s.cache.timeout: %d is negative", o, c.Timeout)
	}
	if et := op.EnforceTimeout; et != nil && et.Value < 0 {
		v.add("%s.enforceTimeout.value: %d is negative", o, et.Value)
	}
	if cb := op.CircuitBreaker; cb != nil {
		if !(cb.Threshold >= 0 && cb.Threshold <= 1) {
			v.add("%s.circuitBreaker.threshold: %v is not between 0 and 1", o, cb.Threshold)
		}
		if !(cb.SampleSize >= 0 && cb.CoolDownPeriod >= 0) {
			v.add("%s.circuitBreaker: sampleSize and coolDownPeriod must not be negative", o)
		}
	}
	if rs := op.RequestSizeLimit; rs != nil && rs.Value < 0 {
		v.add("%s.requestSizeLimit.value: %d is negative", o, rs.Value)
	}
	if rl := op.RateLimit; rl != nil && !readableSeconds(rl.Per) {
		v.add("%s.rateLimit.per: %q is not a duration", o, rl.Per)
	}
}

// responses checks the answers an operation gives itself.
func (v *validator) responses(o operationField, op *xOperation) {
	if mr := op.MockResponse; mr != nil && !(mr.Code >= 100 && mr.Code <= 599) {
		v.add("%s.mockResponse.code: %d is not an HTTP status code", o, mr.Code)
	}
	if ve := op.VirtualEndpoint; ve != nil && !(ve.Body != nil || ve.Path != nil) {
		v.add("%s.virtualEndpoint: needs a body or a path", o)
	}
}
